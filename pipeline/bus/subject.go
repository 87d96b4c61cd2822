package bus

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sessionpipe/sessionpipe/schema"
)

// Defaults for subjects and the stream.
const (
	// DefaultPrefix is the first token(s) of every sessionpipe subject.
	DefaultPrefix = "sessionpipe"

	// DefaultStream is the name of the JetStream stream.
	DefaultStream = "SESSIONPIPE"
)

// EntrySubject returns the subject of an entry from host in format:
// <prefix>.entries.<host>.<format>, with host and format made safe by
// [Token]. Consumers can filter on <prefix>.entries.<host>.> or
// <prefix>.entries.*.<format>.
func EntrySubject(prefix, host, format string) string {
	return prefix + ".entries." + Token(host) + "." + Token(format)
}

// DeadSubject returns the dead-letter subject of host:
// <prefix>.dead.<host>, with host made safe by [Token].
func DeadSubject(prefix, host string) string {
	return prefix + ".dead." + Token(host)
}

// SubjectMatches reports whether subject is the entry subject of e under
// prefix: the host and format the server let through (a tailer's
// identity may publish only its own host's subjects) are those the body
// claims. Consumers skip an entry that fails it.
func SubjectMatches(prefix, subject string, e *schema.Entry) bool {
	// Piece by piece: no string is built for the common case.
	rest, ok := strings.CutPrefix(subject, prefix)
	if !ok {
		return false
	}
	if rest, ok = strings.CutPrefix(rest, ".entries."); !ok {
		return false
	}
	if rest, ok = strings.CutPrefix(rest, Token(e.Host)); !ok {
		return false
	}
	if rest, ok = strings.CutPrefix(rest, "."); !ok {
		return false
	}
	return rest == Token(string(e.Format))
}

// EntriesFilter returns the subject filter matching every entry subject:
// <prefix>.entries.>.
func EntriesFilter(prefix string) string { return prefix + ".entries.>" }

// DeadFilter returns the subject filter matching every dead-letter subject:
// <prefix>.dead.>.
func DeadFilter(prefix string) string { return prefix + ".dead.>" }

// Token makes any string one safe, readable NATS subject token.
//
// Printable characters are kept as they are, UTF-8 letters included, so
// "build-01" and "claude-code" stay readable. Every byte of a character a
// subject must not hold ('.', '*', '>', whitespace, control and invisible
// format characters, invalid UTF-8) and of '%' itself is written as %XX
// (upper-case hex): "my.host" becomes "my%2Ehost". The empty string becomes
// "_", and a lone "_" becomes "%5F".
//
// Token is injective: since '%' always starts an escape, distinct inputs
// give distinct tokens, so two hosts never share a subject. It does not
// allocate when s is already a safe token.
func Token(s string) string {
	switch s {
	case "":
		return "_"
	case "_":
		return "%5F"
	}
	if safeASCII(s) {
		return s
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if keepRune(r, n) {
			b.WriteString(s[i : i+n])
		} else {
			for j := i; j < i+n; j++ {
				b.WriteByte('%')
				b.WriteByte(hex[s[j]>>4])
				b.WriteByte(hex[s[j]&0x0f])
			}
		}
		i += n
	}
	return b.String()
}

// safeASCII reports whether s is printable ASCII without a byte Token
// escapes.
func safeASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == '.' || c == '*' || c == '>' || c == '%' {
			return false
		}
	}
	return true
}

// keepRune reports whether the rune r, n bytes long, may stand verbatim in
// a token.
func keepRune(r rune, n int) bool {
	switch {
	case r == utf8.RuneError && n == 1: // invalid UTF-8
		return false
	case r == '.' || r == '*' || r == '>' || r == '%':
		return false
	case unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
		return false
	}
	return unicode.IsPrint(r)
}

// validSubject reports whether s is a literal subject: non-empty tokens
// separated by '.', without wildcards, whitespace or control characters.
func validSubject(s string) bool {
	if s == "" {
		return false
	}
	for tok := range strings.SplitSeq(s, ".") {
		if tok == "" || tok == "*" || tok == ">" {
			return false
		}
		for _, r := range tok {
			if r == '*' || r == '>' || unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError {
				return false
			}
		}
	}
	return true
}
