package redact_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/redact"
)

// FuzzRedactor checks that redacting never panics, keeps valid JSON valid
// and valid UTF-8 valid, and is idempotent: redacting twice gives what
// redacting once gave, and counts nothing the second time.
func FuzzRedactor(f *testing.F) {
	for _, fk := range newFaker(9).all() {
		for _, c := range contexts {
			f.Add([]byte(c.wrap(fk.Text)))
		}
	}
	for _, s := range ordinary(9) {
		if len(s) < 4096 {
			f.Add([]byte(s))
		}
	}
	lines, _ := corpusLines(f)
	for i := 0; i < len(lines); i += 97 {
		f.Add(lines[i])
	}
	r := mustNew(f, redact.Config{})
	f.Fuzz(func(t *testing.T, in []byte) {
		keep := bytes.Clone(in)
		var st redact.Stats
		out := r.Bytes(in, &st)
		require.Equal(t, keep, in, "input written")
		if utf8.Valid(in) {
			require.True(t, utf8.Valid(out), "%q → %q", in, out)
		}
		var st2 redact.Stats
		require.Equal(t, string(out), string(r.Bytes(out, &st2)), "Bytes not idempotent on %q", in)
		require.Zero(t, st2.Total(), "Bytes found again in %q", out)

		var js redact.Stats
		jout := r.JSON(in, &js)
		require.Equal(t, keep, in, "input written")
		if json.Valid(in) {
			require.True(t, json.Valid(jout), "%q → %q", in, jout)
		}
		if utf8.Valid(in) {
			require.True(t, utf8.Valid(jout), "%q → %q", in, jout)
		}
		var js2 redact.Stats
		require.Equal(t, string(jout), string(r.JSON(jout, &js2)), "JSON not idempotent on %q", in)
		require.Zero(t, js2.Total(), "JSON found again in %q", jout)
	})
}
