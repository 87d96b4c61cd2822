package redact_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"net/url"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/redact"
)

// This file makes FAKE secrets of real shape: right prefixes, lengths,
// alphabets and checksums, random bodies. None is a real credential.

const (
	lowerChars = "abcdefghijklmnopqrstuvwxyz"
	upperChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	digitChars = "0123456789"
	alnumChars = upperChars + lowerChars + digitChars
	b64Chars   = alnumChars + "+/"
	b64URL     = alnumChars + "-_"
	hexChars   = "0123456789abcdef"
)

// fake is one generated secret: Value is what must vanish, Text what is
// written (Value with whatever context its shape needs, e.g. a key name).
type fake struct {
	Kind  redact.Kind
	Name  string // variant, for messages
	Text  string
	Value string
}

type faker struct{ rnd *rand.Rand }

func newFaker(seed uint64) *faker {
	return &faker{rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// str returns n random bytes of alphabet, with at least one lower-case
// letter, one upper-case letter and one digit when the alphabet has them
// and n allows (as random tokens of that length nearly always do).
func (f *faker) str(alphabet string, n int) string {
	for {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[f.rnd.IntN(len(alphabet))]
		}
		s := string(b)
		if n < 12 || !strings.ContainsAny(alphabet, lowerChars) ||
			strings.ContainsAny(s, lowerChars) && strings.ContainsAny(s, digitChars) &&
				(!strings.ContainsAny(alphabet, upperChars) || strings.ContainsAny(s, upperChars)) {
			return s
		}
	}
}

func (f *faker) b64(n int) string {
	return base64.StdEncoding.EncodeToString([]byte(f.str(alnumChars, n)))
}

// base62 encodes v in 6 base-62 digits, as GitHub's token checksums.
func base62(v uint32) string {
	b := make([]byte, 6)
	for i := 5; i >= 0; i-- {
		b[i] = alnumChars[v%62]
		v /= 62
	}
	return string(b)
}

func (f *faker) pem(label string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "-----BEGIN %s-----\n", label)
	for range 6 {
		sb.WriteString(f.str(b64Chars, 64) + "\n")
	}
	sb.WriteString(f.str(b64Chars, 20) + "==\n")
	fmt.Fprintf(&sb, "-----END %s-----", label)
	return sb.String()
}

func (f *faker) jwt() string {
	head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	body := base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, `{"sub":"%d","name":"%s","iat":%d}`,
		f.rnd.IntN(1e9), f.str(lowerChars, 8), 1.7e9+f.rnd.IntN(1e8)))
	return head + "." + body + "." + f.str(b64URL, 43)
}

func plain(k redact.Kind, name, v string) fake { return fake{Kind: k, Name: name, Text: v, Value: v} }

func ctx(k redact.Kind, name, text, v string) fake {
	return fake{Kind: k, Name: name, Text: strings.Replace(text, "%s", v, 1), Value: v}
}

// all returns one fake of every kind and variant.
func (f *faker) all() []fake {
	gh := f.str(alnumChars, 30)
	gh += base62(crc32.ChecksumIEEE([]byte(gh)))
	pass := f.str(alnumChars, 1) + f.str(alnumChars+"!^*-_.~", 13)
	jwt := f.jwt()
	sasSig := url.QueryEscape(base64.StdEncoding.EncodeToString([]byte(f.str(alnumChars, 32))))
	return []fake{
		plain(redact.AWSAccessKey, "AKIA", "AKIA"+f.str(upperChars+"234567", 16)),
		plain(redact.AWSAccessKey, "ASIA", "ASIA"+f.str(upperChars+"234567", 16)),
		ctx(redact.AWSSecretKey, "ini", "aws_secret_access_key = %s", f.str(b64Chars, 40)),
		ctx(redact.AWSSecretKey, "env", "AWS_SECRET_ACCESS_KEY=%s", f.str(b64Chars, 40)),
		ctx(redact.AWSSecretKey, "json", `"SecretAccessKey": "%s"`, f.str(b64Chars, 40)),
		plain(redact.GCPAPIKey, "AIza", "AIza"+f.str(b64URL, 35)),
		ctx(redact.PrivateKey, "gcp-service-account", `{"type": "service_account", "private_key_id": "`+f.str(hexChars, 40)+`", "private_key": %s}`,
			string(must(json.Marshal(f.pem("PRIVATE KEY"))))),
		ctx(redact.AzureKey, "connection-string", "DefaultEndpointsProtocol=https;AccountName=acct"+f.str(digitChars, 4)+
			";AccountKey=%s;EndpointSuffix=core.windows.net", f.b64(64)),
		ctx(redact.AzureKey, "service-bus", "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=%s", f.b64(32)),
		ctx(redact.AzureSAS, "sas-url", "https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-01-01T00:00:00Z&sig=%s", sasSig),
		plain(redact.GitHubToken, "ghp", "ghp_"+gh),
		plain(redact.GitHubToken, "gho", "gho_"+f.str(alnumChars, 36)),
		plain(redact.GitHubToken, "ghu", "ghu_"+f.str(alnumChars, 36)),
		plain(redact.GitHubToken, "ghs", "ghs_"+f.str(alnumChars, 36)),
		plain(redact.GitHubToken, "ghr", "ghr_"+f.str(alnumChars, 36)),
		plain(redact.GitHubToken, "github_pat", "github_pat_"+f.str(alnumChars, 22)+"_"+f.str(alnumChars, 59)),
		plain(redact.GitLabToken, "glpat", "glpat-"+f.str(b64URL, 20)),
		plain(redact.GitLabToken, "glrt", "glrt-"+f.str(b64URL, 20)),
		plain(redact.GitLabToken, "gldt", "gldt-"+f.str(b64URL, 20)),
		plain(redact.GitLabToken, "runner-registration", "GR1348941"+f.str(b64URL, 20)),
		plain(redact.SlackToken, "xoxb", fmt.Sprintf("xoxb-%s-%s-%s", f.str(digitChars, 11), f.str(digitChars, 13), f.str(alnumChars, 24))),
		plain(redact.SlackToken, "xoxp", fmt.Sprintf("xoxp-%s-%s-%s-%s", f.str(digitChars, 11), f.str(digitChars, 11), f.str(digitChars, 13), f.str(hexChars, 32))),
		plain(redact.SlackToken, "xoxa", fmt.Sprintf("xoxa-2-%s-%s", f.str(digitChars, 12), f.str(alnumChars, 30))),
		plain(redact.SlackToken, "xapp", fmt.Sprintf("xapp-1-A%s-%s-%s", f.str(upperChars+digitChars, 10), f.str(digitChars, 13), f.str(hexChars, 64))),
		ctx(redact.SlackWebhook, "webhook", "https://hooks.slack.com/services/%s",
			"T"+f.str(upperChars+digitChars, 8)+"/B"+f.str(upperChars+digitChars, 10)+"/"+f.str(alnumChars, 24)),
		plain(redact.AnthropicKey, "sk-ant-api03", "sk-ant-api03-"+f.str(b64URL, 93)+"AA"),
		plain(redact.AnthropicKey, "sk-ant-admin01", "sk-ant-admin01-"+f.str(b64URL, 93)+"AA"),
		plain(redact.OpenAIKey, "legacy", "sk-"+f.str(alnumChars, 20)+"T3BlbkFJ"+f.str(alnumChars, 20)),
		plain(redact.OpenAIKey, "project", "sk-proj-"+f.str(b64URL, 156)),
		plain(redact.OpenAIKey, "service-account", "sk-svcacct-"+f.str(b64URL, 156)),
		plain(redact.StripeKey, "sk_live", "sk_live_"+f.str(alnumChars, 99)),
		plain(redact.StripeKey, "rk_test", "rk_test_"+f.str(alnumChars, 24)),
		plain(redact.StripeKey, "whsec", "whsec_"+f.str(alnumChars, 32)),
		plain(redact.PrivateKey, "rsa", f.pem("RSA PRIVATE KEY")),
		plain(redact.PrivateKey, "ec", f.pem("EC PRIVATE KEY")),
		plain(redact.PrivateKey, "pkcs8", f.pem("PRIVATE KEY")),
		plain(redact.PrivateKey, "encrypted", f.pem("ENCRYPTED PRIVATE KEY")),
		plain(redact.PrivateKey, "openssh", f.pem("OPENSSH PRIVATE KEY")),
		plain(redact.PrivateKey, "pgp", f.pem("PGP PRIVATE KEY BLOCK")),
		plain(redact.JWT, "hs256", jwt),
		ctx(redact.BearerToken, "opaque", "Authorization: Bearer %s", f.str(alnumChars+"-._~", 40)),
		ctx(redact.JWT, "bearer-jwt", "Authorization: Bearer %s", f.jwt()),
		ctx(redact.BasicAuth, "basic", "Authorization: Basic %s",
			base64.StdEncoding.EncodeToString([]byte(f.str(lowerChars, 6)+":"+pass))),
		ctx(redact.URLPassword, "postgres", "postgres://app:%s@db.internal:5432/app?sslmode=require", f.str(alnumChars, 18)),
		ctx(redact.URLPassword, "redis", "redis://:%s@cache:6379/0", f.str(alnumChars, 24)),
		ctx(redact.URLPassword, "https", "https://deploy:%s@registry.example.com/v2/", pass),
		ctx(redact.GitHubToken, "git-remote", "https://x-access-token:%s@github.com/org/repo.git", "ghs_"+f.str(alnumChars, 36)),
		ctx(redact.Password, "json", `"password": "%s"`, pass),
		ctx(redact.Password, "env", "DB_PASSWORD=%s", pass),
		ctx(redact.Password, "python", "password = '%s'", pass),
		ctx(redact.Password, "yaml", "POSTGRES_PASSWORD: %s", pass),
		ctx(redact.Password, "flag", "--password=%s", pass),
		ctx(redact.Password, "query", "https://example.com/login?user=bob&password=%s&next=/", pass),
		ctx(redact.Secret, "client-secret", `client_secret: "%s"`, f.str(alnumChars, 32)),
		ctx(redact.Secret, "env-token", "export API_TOKEN=%s", f.str(alnumChars, 40)),
		ctx(redact.OpenAIKey, "env-openai", "OPENAI_API_KEY=%s", "sk-proj-"+f.str(b64URL, 156)),
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// contexts wrap a secret's text the ways transcripts hold it. Each returns
// the document and whether it is JSON.
var contexts = []struct {
	name string
	json bool
	wrap func(s string) string
}{
	{"alone", false, func(s string) string { return s }},
	{"prose", false, func(s string) string {
		return "Sure, I set it to " + s + " and restarted the service.\nLet me know if it works."
	}},
	{"markdown", false, func(s string) string { return "Here is the config:\n\n```\n" + s + "\n```\n\n- done" }},
	{"quoted", false, func(s string) string { return "the value (`" + s + "`) was rejected" }},
	{"shell", false, func(s string) string {
		return "$ curl -s -H 'Content-Type: application/json' -d '{\"k\":1}' \"" + s + "\" | jq .\n{\n  \"ok\": true\n}\n"
	}},
	{"log", false, func(s string) string { return "2026-01-02T03:04:05Z INFO config loaded\t" + s + "\t(pid 4242)" }},
	{"code", false, func(s string) string { return "func main() {\n\tcfg := load(`" + s + "`)\n\trun(cfg)\n}\n" }},
	{"json-input", true, func(s string) string {
		return string(must(json.Marshal(map[string]any{"command": "echo " + s + " > /tmp/x && cat /tmp/x", "timeout": 120})))
	}},
	{"json-value", true, func(s string) string {
		return string(must(json.Marshal(map[string]any{"file_path": "/app/.env", "content": s + "\n"})))
	}},
	{"json-escaped-slashes", true, func(s string) string {
		return strings.ReplaceAll(string(must(json.Marshal(map[string]string{"text": "see " + s}))), "/", `\/`)
	}},
	{"json-unicode-escapes", true, func(s string) string {
		// Every third character of the string written as \uXXXX.
		b := must(json.Marshal(s))
		b = b[1 : len(b)-1]
		var sb strings.Builder
		sb.WriteString(`{"output":"`)
		for i := 0; i < len(b); i++ {
			switch c := b[i]; {
			case c == '\\':
				n := 2
				if b[i+1] == 'u' {
					n = 6
				}
				sb.Write(b[i : i+n])
				i += n - 1
			case c < 0x80 && c != '"' && i%3 == 0:
				fmt.Fprintf(&sb, `\u%04x`, c)
			default:
				sb.WriteByte(c)
			}
		}
		sb.WriteString(`"}`)
		return sb.String()
	}},
	{"json-in-json", true, func(s string) string {
		inner := string(must(json.Marshal(map[string]string{"stdout": s})))
		return string(must(json.Marshal(map[string]any{"type": "tool_result", "content": inner})))
	}},
}
