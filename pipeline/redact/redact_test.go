package redact_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/redact"
)

// jsonStrings returns every string of the JSON text doc, keys included,
// and the strings of any JSON text a string holds, recursively.
func jsonStrings(tb testing.TB, doc []byte) []string {
	tb.Helper()
	var v any
	require.NoError(tb, json.Unmarshal(doc, &v), "%s", doc)
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
			if json.Valid([]byte(v)) && strings.ContainsAny(v, "{[\"") {
				out = append(out, jsonStrings(tb, []byte(v))...)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				out = append(out, k)
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// TestRedactor_Fakes puts a fake secret of every kind in every context and
// checks that it is gone, replaced by its kind's marker, and counted.
func TestRedactor_Fakes(t *testing.T) {
	r := mustNew(t, redact.Config{})
	for seed := range uint64(5) {
		for _, f := range newFaker(seed).all() {
			for _, c := range contexts {
				doc := c.wrap(f.Text)
				var st redact.Stats
				var out string
				if c.json {
					require.True(t, json.Valid([]byte(doc)), "%s", doc)
					raw := r.JSON([]byte(doc), &st)
					require.True(t, json.Valid(raw), "%s/%s/%s: invalid JSON:\n%s", f.Kind, f.Name, c.name, raw)
					out = strings.Join(jsonStrings(t, raw), "\n")
				} else {
					out = r.String(doc, &st)
				}
				require.NotContains(t, out, f.Value, "%s/%s in %s (seed %d):\n%s", f.Kind, f.Name, c.name, seed, doc)
				require.Contains(t, out, f.Kind.Marker(), "%s/%s in %s (seed %d):\n%s", f.Kind, f.Name, c.name, seed, out)
				require.Positive(t, st.Count(f.Kind), "%s/%s in %s", f.Kind, f.Name, c.name)
				require.True(t, utf8.ValidString(out))
			}
		}
	}
}

// TestRedactor_EveryKind checks that the fakes cover every kind.
func TestRedactor_EveryKind(t *testing.T) {
	seen := map[redact.Kind]bool{}
	for _, f := range newFaker(1).all() {
		seen[f.Kind] = true
	}
	for k := range redact.NumKinds {
		require.True(t, seen[k], "no fake of kind %s", k)
	}
}

// TestRedactor_PortablePrefilter runs the fakes and the ordinary text
// through the portable pair loop, as off amd64.
func TestRedactor_PortablePrefilter(t *testing.T) {
	defer redact.SetAVX2(false)()
	t.Run("Fakes", TestRedactor_Fakes)
	t.Run("Ordinary", TestRedactor_LeavesOrdinaryTextAlone)
	t.Run("JSON", TestRedactor_JSON)
}

// TestRedactor_String checks exact outputs on text.
func TestRedactor_String(t *testing.T) {
	tests := []struct{ in, want string }{
		{"DATABASE_URL=postgres://app:p@ss@w0rd@db.internal:5432/app",
			"DATABASE_URL=postgres://app:[REDACTED:url-password]@db.internal:5432/app"},
		{"see https://medium.com/@author and https://host/a@b", "see https://medium.com/@author and https://host/a@b"},
		{`echo "{\"password\":\"hunter2\"}" | jq`, `echo "{\"password\":\"[REDACTED:password]\"}" | jq`},
		{"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB\n(output truncated)", "[REDACTED:private-key](output truncated)"},
		{"OPENAI_API_KEY=sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "OPENAI_API_KEY=[REDACTED:openai-key]"},
	}
	r := mustNew(t, redact.Config{})
	for _, tt := range tests {
		got := r.String(tt.in, nil)
		require.Equal(t, tt.want, got, "String(%q)", tt.in)
		require.Equal(t, got, r.String(got, nil), "redacting twice")
	}
}
