package bus_test

import (
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/schema"
)

func TestToken(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"Plain", "build-01", "build-01"},
		{"Format", "claude-code", "claude-code"},
		{"Empty", "", "_"},
		{"LoneUnderscore", "_", "%5F"},
		{"UnderscoreInside", "a_b", "a_b"},
		{"Dot", "my.host.local", "my%2Ehost%2Elocal"},
		{"Wildcards", "a*b>c", "a%2Ab%3Ec"},
		{"LoneStar", "*", "%2A"},
		{"LoneGreater", ">", "%3E"},
		{"Percent", "100%", "100%25"},
		{"LooksEscaped", "%2E", "%252E"},
		{"Space", "my host", "my%20host"},
		{"Tab", "a\tb", "a%09b"},
		{"Newline", "a\r\nb", "a%0D%0Ab"},
		{"Control", "a\x00b\x7f", "a%00b%7F"},
		{"Unicode", "héllo-日本", "héllo-日本"},
		{"UnicodeSpace", "a\u00a0b", "a%C2%A0b"},
		{"FormatChar", "a\u200bb", "a%E2%80%8Bb"},
		{"InvalidUTF8", "a\xffb", "a%FFb"},
		{"Slash", "/home/u", "/home/u"},
		{"Colon", "host:4222", "host:4222"},
		{"Dollar", "$SYS", "$SYS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := bus.Token(tt.in)
			assert.Equal(t, tt.want, got, "Token(%q)", tt.in)
			requireSafeToken(t, got)
			assert.Equal(t, tt.in, untoken(t, got), "untoken(Token(%q))", tt.in)
		})
	}
}

func TestToken_Injective(t *testing.T) {
	inputs := []string{"", "_", "%", "%5F", "%25", ".", "%2E", "a.b", "a%2Eb", "a b", "a%20b", "a\x00", "a%00", "*", ">", "x"}
	seen := map[string]string{}
	for _, in := range inputs {
		tok := bus.Token(in)
		if prev, ok := seen[tok]; ok {
			require.Failf(t, "collision", "Token(%q) = Token(%q) = %q", in, prev, tok)
		}
		seen[tok] = in
	}
}

func TestToken_NoAllocWhenSafe(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() { _ = bus.Token("build-01.example") })
	assert.Positive(t, allocs, "a dot must be escaped")
	allocs = testing.AllocsPerRun(100, func() { _ = bus.Token("build-01") })
	assert.Zero(t, allocs)
}

func FuzzToken(f *testing.F) {
	for _, s := range []string{"", "_", "a.b", "%", "héllo", "\xff", "a b\t", "*>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok := bus.Token(s)
		requireSafeToken(t, tok)
		require.Equal(t, s, untoken(t, tok))
	})
}

func TestSubjects(t *testing.T) {
	assert.Equal(t, "sessionpipe.entries.build-01.claude-code", bus.EntrySubject(bus.DefaultPrefix, "build-01", "claude-code"))
	assert.Equal(t, "sp.prod.entries.my%2Ehost._", bus.EntrySubject("sp.prod", "my.host", ""))
	assert.Equal(t, "sessionpipe.dead.my%20host", bus.DeadSubject(bus.DefaultPrefix, "my host"))
	assert.Equal(t, "sessionpipe.entries.>", bus.EntriesFilter(bus.DefaultPrefix))
	assert.Equal(t, "sessionpipe.dead.>", bus.DeadFilter(bus.DefaultPrefix))
}

// requireSafeToken checks that tok is one non-empty NATS subject token.
func requireSafeToken(tb testing.TB, tok string) {
	tb.Helper()
	require.NotEmpty(tb, tok)
	require.True(tb, utf8.ValidString(tok), "token %q is not valid UTF-8", tok)
	for _, r := range tok {
		require.False(tb, r == '.' || r == '*' || r == '>' || unicode.IsSpace(r) || unicode.IsControl(r),
			"token %q holds %q", tok, r)
	}
}

// untoken inverts Token; it proves Token injective.
func untoken(tb testing.TB, tok string) string {
	tb.Helper()
	switch tok {
	case "_":
		return ""
	case "%5F":
		return "_"
	}
	var b strings.Builder
	for i := 0; i < len(tok); i++ {
		if tok[i] != '%' {
			b.WriteByte(tok[i])
			continue
		}
		require.LessOrEqual(tb, i+3, len(tok), "truncated escape in %q", tok)
		v, err := strconv.ParseUint(tok[i+1:i+3], 16, 8)
		require.NoError(tb, err, "escape in %q", tok)
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String()
}

func TestSubjectMatches(t *testing.T) {
	e := &schema.Entry{Host: "build.01", Format: schema.FormatClaudeCode}
	subj := bus.EntrySubject("sp", e.Host, string(e.Format))
	require.True(t, bus.SubjectMatches("sp", subj, e))
	for _, other := range []string{
		bus.EntrySubject("sp", "build.02", "claude-code"),
		bus.EntrySubject("sp", "build.01", "codex"),
		bus.EntrySubject("other", "build.01", "claude-code"),
		subj + ".x", "sp.entries", "",
	} {
		require.False(t, bus.SubjectMatches("sp", other, e), other)
	}
	require.Zero(t, testing.AllocsPerRun(100, func() { bus.SubjectMatches("sp", "sp.entries.h.pi", &schema.Entry{Host: "h", Format: "pi"}) }))
}
