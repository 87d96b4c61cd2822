package redact

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKeyKind_EndFilter checks that keyKind's filter on the key's last
// letters refuses no key its words take: every secret word in both
// cases, with prefixes, separators inside and after, and random keys
// dense in the words' letters, against keyWords alone.
func TestKeyKind_EndFilter(t *testing.T) {
	words := []string{"password", "passwd", "passphrase", "secretaccesskey", "secret", "secretkey", "token",
		"apikey", "privatekey", "aws_secret", "AWS-Secret-Key"}
	var keys []string
	for _, w := range words {
		for _, pre := range []string{"", "x", "db_", "client.", "AWS", "aws_"} {
			for _, post := range []string{"", "_", "-", ".", "__"} {
				keys = append(keys, pre+w+post)
				up := []byte(pre + w + post)
				for i := range up {
					if 'a' <= up[i] && up[i] <= 'z' {
						up[i] -= 'a' - 'A'
					}
				}
				keys = append(keys, string(up))
				// A separator between every letter.
				var sep []byte
				for i := range len(w) {
					sep = append(sep, w[i], "_-."[i%3])
				}
				keys = append(keys, pre+string(sep))
			}
		}
	}
	const alphabet = "passwordphraseecrtkyaonvAPIKEY_-.x"
	rnd := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		b := make([]byte, rnd.IntN(20))
		for i := range b {
			b[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		keys = append(keys, string(b))
	}
	taken := 0
	for _, k := range keys {
		wk, wok := keyWords([]byte(k))
		gk, gok := keyKind([]byte(k))
		require.Equal(t, wok, gok, "key %q", k)
		require.Equal(t, wk, gk, "key %q", k)
		if wok {
			taken++
		}
	}
	require.Greater(t, taken, 500, "the keys exercise the words")
	for _, k := range []string{"type", "text", "content", "role", "uuid", "sessionId", "tokens", "input_tokens"} {
		require.False(t, secretKeyEnd([]byte(k)), "key %q", k)
	}
}
