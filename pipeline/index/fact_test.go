package index

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A fact's key depends on its fields' values, their order and their
// boundaries, and on nothing else. (It does not record their types: no
// map of facts mixes identities of different shapes.)
func TestKeyer(t *testing.T) {
	t.Parallel()
	k := newKeyer(1)
	key := func(fields ...any) factKey {
		h := k.start()
		for _, f := range fields {
			switch f := f.(type) {
			case string:
				h.string(f)
			case int64:
				h.int(f)
			}
		}
		return h.sum()
	}
	seen := map[factKey]string{}
	for name, fields := range map[string][]any{
		"ab,c":      {"ab", "c"},
		"a,bc":      {"a", "bc"},
		"abc":       {"abc"},
		"a\\x00,bc": {"a\x00", "bc"},
		"a,\\x00bc": {"a", "\x00bc"},
		"empty":     {},
		",":         {"", ""},
		"a,1":       {"a", int64(1)},
		"a,2":       {"a", int64(2)},
		"1,a":       {int64(1), "a"},
		"long":      {string(make([]byte, 300))},
		"long+1":    {string(make([]byte, 301))},
	} {
		got := key(fields...)
		require.NotContains(t, seen, got, "%s collides with %s", name, seen[got])
		seen[got] = name
		require.Equal(t, got, key(fields...), "%s: same fields, same key", name)
	}
}

// Keys are a function of the seed and the identity only: a persisted
// state resumed by another process with the same seed finds its facts.
func TestKeyer_DeterministicPerSeed(t *testing.T) {
	t.Parallel()
	a, b, c := newKeyer(42), newKeyer(42), newKeyer(43)
	for _, k := range []*keyer{a, b, c} {
		k.start().string("claude:msg_01:req_01")
	}
	require.Equal(t, a.sum(), b.sum())
	require.NotEqual(t, a.sum(), c.sum())
}
