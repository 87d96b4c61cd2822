package redact

import (
	"bytes"
	"encoding/base64"
)

// A matcher looks for a secret at an anchor found at position at of b (the
// anchor's literal is known to be there). It returns the span to replace,
// which may be a part of what it matched (a password, not its key), and
// the kind found.
type matcher func(b []byte, at int) (start, end int, k Kind, ok bool)

// anchor is a literal whose presence makes a secret possible. Text with no
// anchor holds no secret: the prefilter looks only for these.
type anchor struct {
	lit  string // lower case when fold
	fold bool   // ASCII case-insensitive
	off  int    // the prefilter looks for lit[off:off+2], rarer in text than lit[:2]
	m    matcher
	// named, when set, tells whether the anchor at i can lead to a match
	// from what escapes cannot change (a key's name). Where it says no,
	// the anchor is as good as absent: a JSON string with escapes is not
	// unescaped for it.
	named func(b []byte, i int) bool
}

func (a *anchor) at(b []byte, i int) bool {
	if i < 0 || len(b)-i < len(a.lit) {
		return false
	}
	if !a.fold {
		return string(b[i:i+len(a.lit)]) == a.lit
	}
	return hasFold(b, i, a.lit)
}

// anchors, in the order they are tried at one position: the more specific
// first (sk-ant- before sk-).
var anchors = []anchor{
	{lit: "AKIA", off: 1, m: awsKeyID},
	{lit: "ASIA", off: 1, m: awsKeyID},
	{lit: "AIza", off: 1, m: prefixed(4, clsB64URL, 35, 35, GCPAPIKey, nil)},
	{lit: "AccountKey=", off: 6, m: azureKey},
	{lit: "SharedAccessKey=", off: 11, m: azureKey},
	{lit: "sig=", off: 2, m: azureSAS},
	{lit: "ghp_", m: prefixed(4, clsAlnum, 36, 0, GitHubToken, nil)},
	{lit: "gho_", m: prefixed(4, clsAlnum, 36, 0, GitHubToken, nil)},
	{lit: "ghu_", m: prefixed(4, clsAlnum, 36, 0, GitHubToken, nil)},
	{lit: "ghs_", m: prefixed(4, clsAlnum, 36, 0, GitHubToken, nil)},
	{lit: "ghr_", m: prefixed(4, clsAlnum, 36, 0, GitHubToken, nil)},
	{lit: "github_pat_", off: 5, m: prefixed(11, clsWord, 60, 0, GitHubToken, nil)},
	{lit: "glpat-", m: gitlab(6)},
	{lit: "gldt-", m: gitlab(5)},
	{lit: "glrt-", m: gitlab(5)},
	{lit: "glptt-", m: gitlab(6)},
	{lit: "glcbt-", m: gitlab(6)},
	{lit: "gloas-", m: gitlab(6)},
	{lit: "glimt-", m: gitlab(6)},
	{lit: "glsoat-", m: gitlab(7)},
	{lit: "glffct-", m: gitlab(7)},
	{lit: "glagent-", m: gitlab(8)},
	{lit: "GR1348941", m: gitlab(9)},
	{lit: "xoxa-", m: slack(5)},
	{lit: "xoxb-", m: slack(5)},
	{lit: "xoxe-", m: slack(5)},
	{lit: "xoxp-", m: slack(5)},
	{lit: "xoxr-", m: slack(5)},
	{lit: "xoxs-", m: slack(5)},
	{lit: "xoxe.xoxp-", m: slack(10)},
	{lit: "xapp-", off: 3, m: slack(5)},
	{lit: "hooks.slack.com/", off: 10, m: slackWebhook},
	{lit: "sk-ant-", off: 1, m: prefixed(7, clsB64URL, 32, 0, AnthropicKey, nil)},
	{lit: "sk-", off: 1, m: prefixed(3, clsB64URL, 20, 0, OpenAIKey, randomish)},
	{lit: "sk_live_", off: 1, m: prefixed(8, clsAlnum, 16, 0, StripeKey, nil)},
	{lit: "sk_test_", off: 1, m: prefixed(8, clsAlnum, 16, 0, StripeKey, nil)},
	{lit: "rk_live_", off: 1, m: prefixed(8, clsAlnum, 16, 0, StripeKey, nil)},
	{lit: "rk_test_", off: 1, m: prefixed(8, clsAlnum, 16, 0, StripeKey, nil)},
	{lit: "whsec_", off: 4, m: prefixed(6, clsB64Pad, 24, 0, StripeKey, nil)},
	{lit: "-----BEGIN", off: 6, m: pemBlock},
	{lit: "eyJ", off: 1, m: jwt},
	{lit: "authorization", fold: true, off: 6, m: authorization},
	{lit: "://", m: urlPassword},
	{lit: "passw", fold: true, off: 3, m: assignment, named: secretKey},
	{lit: "passphr", fold: true, off: 5, m: assignment, named: secretKey},
	{lit: "secret", fold: true, off: 2, m: assignment, named: secretKey},
	{lit: "token", fold: true, off: 1, m: assignment, named: secretKey},
	{lit: "apikey", fold: true, off: 2, m: assignment, named: secretKey},
	{lit: "api_key", fold: true, off: 2, m: assignment, named: secretKey},
	{lit: "api-key", fold: true, off: 2, m: assignment, named: secretKey},
	{lit: "privatekey", fold: true, off: 2, m: assignment, named: secretKey},
	{lit: "private_key", fold: true, off: 2, m: assignment, named: secretKey},
}

// prefixed matches a literal prefix of plen bytes at a token start,
// followed by a run of class c of at least min bytes (at most max when max
// is not 0) that ends the token; check, when set, vets the run.
func prefixed(plen int, c *class, min, max int, k Kind, check func([]byte) bool) matcher {
	return func(b []byte, at int) (int, int, Kind, bool) {
		// A token starts where a run of its alphabet starts: a prefix
		// inside one (sk-sk-sk-…) is not tried, so that a run is walked
		// once, not once per prefix in it.
		if !startsToken(b, at) || at > 0 && c[b[at-1]] {
			return 0, 0, 0, false
		}
		end := runMax(b, at+plen, c, maxToken)
		n := end - at - plen
		if n < min || max > 0 && n > max || !endsToken(b, end) {
			return 0, 0, 0, false
		}
		if check != nil && !check(b[at+plen:end]) {
			return 0, 0, 0, false
		}
		return at, end, k, true
	}
}

// randomish vets an OpenAI-style key body: it mixes letters and digits,
// so that kebab-case names after "sk-" ("sk-learn-…") are left alone.
func randomish(v []byte) bool {
	for _, p := range []string{"proj-", "svcacct-", "admin-"} {
		if bytes.HasPrefix(v, []byte(p)) {
			v = v[len(p):]
			break
		}
	}
	return len(v) >= 20 && mixed(v, 3)
}

func awsKeyID(b []byte, at int) (int, int, Kind, bool) {
	end := run(b, at+4, clsUpperNum)
	if !startsToken(b, at) || end-at != 20 || !endsToken(b, end) {
		return 0, 0, 0, false
	}
	return at, end, AWSAccessKey, true
}

func gitlab(plen int) matcher {
	return prefixed(plen, clsTokenDot, 20, 0, GitLabToken, func(v []byte) bool { return mixed(v, 2) })
}

func slack(plen int) matcher {
	return prefixed(plen, clsB64URL, 10, 0, SlackToken, hasDigit)
}

func slackWebhook(b []byte, at int) (int, int, Kind, bool) {
	p := at + len("hooks.slack.com/")
	for _, s := range []string{"services/", "workflows/", "triggers/"} {
		if bytes.HasPrefix(b[p:], []byte(s)) {
			vs := p + len(s)
			ve := runMax(b, vs, clsWebhook, maxToken)
			if ve-vs >= 20 {
				return vs, ve, SlackWebhook, true
			}
		}
	}
	return 0, 0, 0, false
}

// azureKey matches the base64 value of AccountKey= or SharedAccessKey= in
// an Azure connection string.
func azureKey(b []byte, at int) (int, int, Kind, bool) {
	vs := bytes.IndexByte(b[at:], '=') + at + 1
	ve := runMax(b, vs, clsB64Pad, maxToken)
	if ve-vs < 20 {
		return 0, 0, 0, false
	}
	return vs, ve, AzureKey, true
}

// azureSAS matches the signature of a shared access signature URL
// (…?sv=…&sig=…).
func azureSAS(b []byte, at int) (int, int, Kind, bool) {
	if at == 0 || b[at-1] != '&' && b[at-1] != '?' {
		return 0, 0, 0, false
	}
	vs := at + 4
	ve := runMax(b, vs, clsSAS, maxToken)
	if ve-vs < 20 {
		return 0, 0, 0, false
	}
	return vs, ve, AzureSAS, true
}

// maxPEM bounds the search for the end of a private key block (an RSA
// 4096-bit key takes 3.3 KB).
const maxPEM = 8 << 10

// maxToken bounds the walk over a token's or a value's alphabet, so that
// text with an anchor every few bytes costs a bounded multiple of its
// length.
const maxToken = 4096

// pemBlock matches a PEM private key block, BEGIN line to END line, or, when
// the END line is missing (output cut short), the header and the base64
// body that follows it.
func pemBlock(b []byte, at int) (int, int, Kind, bool) {
	hs := at + len("-----BEGIN")
	he := bytes.Index(b[hs:min(len(b), hs+80)], []byte("-----"))
	if he < 0 || !bytes.Contains(b[hs:hs+he], []byte("PRIVATE KEY")) {
		return 0, 0, 0, false
	}
	body := hs + he + 5
	lim := min(len(b), body+maxPEM)
	if e := bytes.Index(b[body:lim], []byte("-----END")); e >= 0 {
		ts := body + e + len("-----END")
		te := bytes.Index(b[ts:min(len(b), ts+80)], []byte("-----"))
		if te >= 0 && bytes.Contains(b[ts:ts+te], []byte("PRIVATE KEY")) {
			return at, ts + te + 5, PrivateKey, true
		}
	}
	return at, run(b, body, clsPEMBody), PrivateKey, true
}

// jwt matches three base64url parts whose first decodes to a JSON object
// with an "alg" member.
func jwt(b []byte, at int) (int, int, Kind, bool) {
	if at > 0 && (clsB64URL[b[at-1]] || b[at-1] == '.') {
		return 0, 0, 0, false
	}
	h := run(b, at, clsB64URL)
	if h-at < 10 || h >= len(b) || b[h] != '.' {
		return 0, 0, 0, false
	}
	p := run(b, h+1, clsB64URL)
	if p-h-1 < 2 || p >= len(b) || b[p] != '.' {
		return 0, 0, 0, false
	}
	end := run(b, p+1, clsB64URL)
	if !endsToken(b, end) {
		return 0, 0, 0, false
	}
	var buf [384]byte
	head := b[at:h]
	if base64.RawURLEncoding.DecodedLen(len(head)) > len(buf) {
		return 0, 0, 0, false
	}
	n, err := base64.RawURLEncoding.Decode(buf[:], head)
	if err != nil || n == 0 || buf[0] != '{' || !bytes.Contains(buf[:n], []byte(`"alg"`)) {
		return 0, 0, 0, false
	}
	return at, end, JWT, true
}

// skipBlanks returns the end of the spaces and tabs from i.
func skipBlanks(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

// authorization matches the credentials of an Authorization header
// (Proxy-Authorization too) written as HTTP, curl -H, JSON or code, any
// case: "Bearer <token>" or "Basic <base64>".
func authorization(b []byte, at int) (int, int, Kind, bool) {
	p := at + len("authorization")
	for lim := p + 8; p < len(b) && p < lim; p++ {
		if c := b[p]; c != ' ' && c != '\t' && c != '"' && c != '\'' && c != '`' && c != '\\' && c != ':' && c != '=' {
			break
		}
	}
	switch {
	case hasFold(b, p, "bearer"):
		return bearer(b, p)
	case hasFold(b, p, "basic"):
		return basicAuth(b, p)
	}
	return 0, 0, 0, false
}

// hasFold reports whether b holds lit (lower case) at i, in any case.
func hasFold(b []byte, i int, lit string) bool {
	if len(b)-i < len(lit) {
		return false
	}
	for j := 0; j < len(lit); j++ {
		if toLower(b[i+j]) != lit[j] {
			return false
		}
	}
	return true
}

// bearer matches "Bearer <token>": the token, when it holds letters and
// digits and is 16 bytes or more.
func bearer(b []byte, at int) (int, int, Kind, bool) {
	vs := skipBlanks(b, at+6)
	if vs == at+6 {
		return 0, 0, 0, false
	}
	ve := run(b, vs, clsBearer)
	for ve < len(b) && b[ve] == '=' {
		ve++
	}
	v := b[vs:ve]
	if len(v) < 16 || !hasDigit(v) || !hasLetter(v) {
		return 0, 0, 0, false
	}
	return vs, ve, BearerToken, true
}

// basicAuth matches "Basic <base64>" whose base64 decodes to printable
// "user:password".
func basicAuth(b []byte, at int) (int, int, Kind, bool) {
	vs := skipBlanks(b, at+5)
	if vs == at+5 {
		return 0, 0, 0, false
	}
	ve := run(b, vs, clsB64)
	pad := ve
	for pad < len(b) && pad-ve < 2 && b[pad] == '=' {
		pad++
	}
	if ve-vs < 8 || !endsToken(b, pad) {
		return 0, 0, 0, false
	}
	var buf [256]byte
	v := b[vs:ve]
	if base64.RawStdEncoding.DecodedLen(len(v)) > len(buf) || len(v)%4 == 1 {
		return 0, 0, 0, false
	}
	n, err := base64.RawStdEncoding.Decode(buf[:], v)
	if err != nil || bytes.IndexByte(buf[:n], ':') < 1 {
		return 0, 0, 0, false
	}
	for _, c := range buf[:n] {
		if c < 0x20 || c > 0x7e {
			return 0, 0, 0, false
		}
	}
	return vs, pad, BasicAuth, true
}

// urlPassword matches the password of scheme://user:password@host: in the
// authority (up to the first /, ?, # or blank), between the first colon
// and the last @, as Go's net/url and browsers split it, so that an
// unescaped @ in the password ("p@ss") does not cut it short.
func urlPassword(b []byte, at int) (int, int, Kind, bool) {
	s := at
	for s > 0 && clsScheme[b[s-1]] {
		s--
	}
	if s == at || !hasLetter(b[s:s+1]) {
		return 0, 0, 0, false
	}
	us := at + 3
	auth := b[us:runNot(b[:min(len(b), us+maxToken)], us, clsStopAuthority)]
	last := bytes.LastIndexByte(auth, '@')
	if last < 0 || last == len(auth)-1 {
		return 0, 0, 0, false
	}
	colon := bytes.IndexByte(auth[:last], ':')
	if colon < 0 || bytes.Contains(auth[:last], []byte(MarkerPrefix)) || !valueOK(URLPassword, auth[colon+1:last]) {
		return 0, 0, 0, false
	}
	return us + colon + 1, us + last, URLPassword, true
}
