// Package redact finds well-known shapes of secrets in transcript text and
// replaces them with markers before anything leaves the host. It works on
// strings ([Redactor.String]), JSON values such as tool inputs and raw
// source lines ([Redactor.JSON], which keeps them valid) and whole entries
// ([Redactor.Entry], which applies a [Mode]). It recognises shapes, not
// meaning: it is a safety net, not a guarantee (see "What it misses").
//
// # Modes
//
// [Redacted] (the default and the zero value) replaces secrets and keeps
// everything else; [Full] changes nothing; [Metadata] keeps no free text at
// all: an entry's Text, Title, CommandArgs, tool call inputs, tool result
// contents and Raw line are emptied, while ids, names, models, usage,
// counts, timestamps and paths stay. [ParseMode] reads "full", "redacted"
// and "metadata", the values of the commands' --content flag.
//
// # Markers
//
// A secret is replaced by "[REDACTED:<kind>]", e.g. "[REDACTED:github-token]".
// Only the secret goes: a password's key, a URL's user and host, the word
// Bearer stay, so the text still reads ("postgres://app:[REDACTED:url-password]@db/app",
// "DB_PASSWORD=[REDACTED:password]"). Markers hold no quote, backslash or
// control character, so they are safe in JSON strings, and redacting again
// changes nothing: a value that already is a marker is left alone.
//
// # Kinds
//
// Each [Kind] has a name, used in its marker and as a metrics label
// ([Stats] counts by kind):
//
//   - aws-access-key: AKIA… and ASIA… access key ids (20 characters).
//   - aws-secret-key: a 40-character key assigned to aws_secret_access_key,
//     AWS_SECRET_ACCESS_KEY, SecretAccessKey… (quoted or not, INI, env, JSON).
//   - gcp-api-key: AIza… API keys. A service account's private key is a
//     private-key (its PEM block, \n escapes included).
//   - azure-key: the value of AccountKey= or SharedAccessKey= in a connection string.
//   - azure-sas: the sig= of a shared access signature URL.
//   - github-token: ghp_, gho_, ghu_, ghs_, ghr_ (36 characters) and github_pat_ tokens.
//   - gitlab-token: glpat-, gldt-, glrt-, glptt-, glcbt-, gloas-, glimt-, glsoat-,
//     glffct-, glagent- tokens and GR1348941 runner registration tokens.
//   - slack-token: xoxa-, xoxb-, xoxe-, xoxp-, xoxr-, xoxs-, xapp- tokens.
//   - slack-webhook: the path of a hooks.slack.com/services|workflows|triggers URL.
//   - anthropic-key: sk-ant-… keys.
//   - openai-key: sk-, sk-proj-, sk-svcacct-, sk-admin- keys whose body mixes
//     lower case, upper case and digits (so that "sk-learn-…" names are not keys).
//   - stripe-key: sk_live_, sk_test_, rk_live_, rk_test_ keys and whsec_ webhook secrets.
//   - private-key: a PEM block "-----BEGIN … PRIVATE KEY-----" to its END line
//     (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP … BLOCK); cut short, the header and
//     the base64 that follows. Certificates and public keys are left alone.
//   - jwt: three base64url parts whose header decodes to a JSON object with "alg".
//   - bearer-token: the token of an Authorization header "Bearer <token>"
//     (HTTP, curl -H, JSON, code; any case), 16 characters or more, with
//     letters and digits.
//   - basic-auth: the base64 of an Authorization header "Basic <base64>" that
//     decodes to printable user:password.
//   - url-password: the password of scheme://user:password@host.
//   - password: a value assigned to a key ending in password, passwd or
//     passphrase; secret: a value assigned to a key ending in secret,
//     secret_key, token, api_key or private_key, 8 characters or more mixing
//     letters and digits or cases. Assignments are "key": "value",
//     key = 'value', key: "value" (quotes escaped as in JSON held as text
//     too), and a JSON member whose key says so; unquoted values only where
//     they cannot be code: keys without lower-case letters (DB_PASSWORD=…,
//     POSTGRES_PASSWORD: …), query parameters (?password=…) and long flags
//     (--password=…). References and placeholders ($VAR, ${…}, {{…}}, <…>,
//     ****, "string", "null", …) are not secrets.
//
// A secret found by its context (password, secret, url-password,
// bearer-token) that has a known shape is named by its shape:
// OPENAI_API_KEY=sk-proj-… is an openai-key, Bearer eyJ… a jwt.
//
// # JSON and escapes
//
// Transcripts hold text inside JSON, often twice (a tool's JSON output
// printed into a JSON line). Inside a JSON string, [Redactor.JSON] looks at
// the text the string stands for, and at that text unescaped once more when
// it holds JSON, so a key written with \n line ends or a URL with \/ or
// \u002f escapes (\\/ printed into a string) is found, and it replaces the
// secret's bytes from the first to the last escape it spans, leaving every
// other byte as written: valid JSON stays valid, no escape is cut. Text
// (from [Redactor.String]) that holds escaped JSON is searched both as
// written and unescaped, two levels deep.
//
// # Speed
//
// Every anchor (a literal without which a kind cannot match: "AKIA",
// "ghp_", "sk-", "-----BEGIN", "eyJ", "://", "authorization", "passw", …)
// holds a two-byte pair chosen to be rare in text ("yJ" of "eyJ", "iz" of
// "authorization"); a 64-Kbit table of those pairs is looked up once per
// input byte, and only where a pair is found are the anchors compared and,
// where one is, its matcher run. [Redactor.JSON] finds its strings in one
// pass over quotes and backslashes, 64 bytes at a time, which also tells
// whether a string holds an escape that could hide a secret: only such a
// string, or one with an anchor, is unescaped. Nothing is allocated unless
// a secret is found. Regular expressions are not used: every shape is a
// prefix and a run of one alphabet, or a short structure matched by hand,
// which RE2 would only make slower.
//
// # Use
//
// One [Redactor] serves every goroutine. A tailer builds it once from its
// --content flag (*[Mode] is a flag.Value; [ParseMode] for an environment
// variable or a configuration file), calls [Redactor.Entry] on each decoded
// entry before encoding it, and adds the returned [Stats] to its totals
// ([Stats.Add]) for its metrics (secrets redacted by kind, fields emptied).
// In [Metadata] mode a tailer may as well not extract text at all
// (parse.Config.Text off); Entry empties what is left.
//
// # What it misses
//
// It finds shapes. It does not find: secrets without a known prefix or a
// telling key (a random password in prose, "Bearer <token>" outside an
// Authorization header, an opaque token in another header, a database DSN
// without scheme, key=value pairs with lower-case keys and unquoted values
// such as password = hunter2 in an INI file, "password hunter2" in a
// .netrc, curl -u user:pass), tokens of services not listed above (npm_,
// pypi-, hf_, Twilio, SendGrid, …), secrets split across fields or lines,
// encoded (base64 of a token, gzip), or assigned to a key named otherwise
// (API_PASS, pw, creds).
// Non-string JSON values (a numeric PIN) are kept. A GitHub token's
// checksum is not verified and a JWT's signature is not checked: shapes
// suffice and give no false positives in the shipped samples. The shipped
// samples hold one secret-shaped text, a documentation example
// ("qpdf --password=mypassword"), which is redacted.
package redact
