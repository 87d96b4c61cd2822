package redact

// Byte classes of the matchers, as 256-entry tables.
type class [256]bool

func newClass(sets ...string) *class {
	var c class
	for _, s := range sets {
		for i := 0; i < len(s); i++ {
			c[s[i]] = true
		}
	}
	return &c
}

const (
	lower  = "abcdefghijklmnopqrstuvwxyz"
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	digits = "0123456789"
	alnum  = lower + upper + digits
)

var (
	clsAlnum         = newClass(alnum)
	clsUpperNum      = newClass(upper, digits)
	clsB64URL        = newClass(alnum, "-_")                  // base64url, and most token bodies
	clsTokenDot      = newClass(alnum, "-_.")                 // GitLab tokens
	clsB64           = newClass(alnum, "+/")                  // base64 without padding
	clsB64Pad        = newClass(alnum, "+/=")                 // base64 with padding
	clsSAS           = newClass(alnum, "+/=%")                // URL-encoded base64
	clsWebhook       = newClass(alnum, "/_-")                 // Slack webhook paths
	clsBearer        = newClass(alnum, "-._~+/")              // RFC 6750 b64token
	clsScheme        = newClass(alnum, "+.-")                 // URL scheme
	clsKey           = newClass(alnum, "_.-")                 // a key or variable name
	clsWord          = newClass(alnum, "_")                   // what may not touch a token's start
	clsPEMBody       = newClass(alnum, "+/=\r\n\\")           // a PEM body, "\n" written out included
	clsStopValue     = newClass(" \t\r\n\f\v\"'`&;,()]}<>\\") // ends an unquoted value
	clsStopAuthority = newClass(" \t\r\n\f\v\"'`/?#<>")       // ends a URL's authority
	clsSpace         = newClass(" \t\r\n\f\v")
)

// run returns the end of the run of bytes of class c that starts at i.
func run(b []byte, i int, c *class) int {
	for i < len(b) && c[b[i]] {
		i++
	}
	return i
}

// runMax is run stopping after max bytes.
func runMax(b []byte, i int, c *class, max int) int {
	return run(b[:min(len(b), i+max)], i, c)
}

// runNot returns the end of the run of bytes not of class c from i.
func runNot(b []byte, i int, c *class) int {
	for i < len(b) && !c[b[i]] {
		i++
	}
	return i
}

// startsToken reports whether a token may start at i: nothing word-like
// touches it on the left.
func startsToken(b []byte, i int) bool { return i == 0 || !clsWord[b[i-1]] }

// endsToken reports whether a token may end at i.
func endsToken(b []byte, i int) bool { return i >= len(b) || !clsWord[b[i]] }

func toLower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// mixed reports whether v holds at least n of the three classes lower-case
// letter, upper-case letter and digit: random tokens do, words and
// identifiers mostly do not.
func mixed(v []byte, n int) bool {
	var l, u, d int
	for _, c := range v {
		switch {
		case 'a' <= c && c <= 'z':
			l = 1
		case 'A' <= c && c <= 'Z':
			u = 1
		case '0' <= c && c <= '9':
			d = 1
		}
	}
	return l+u+d >= n
}

func hasDigit(v []byte) bool {
	for _, c := range v {
		if '0' <= c && c <= '9' {
			return true
		}
	}
	return false
}

func hasLetter(v []byte) bool {
	for _, c := range v {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			return true
		}
	}
	return false
}
