package redact_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/redact"
)

// jsonBoth redacts in with the probe of escaped strings on and off.
func jsonBoth(r *redact.Redactor, in []byte) (probed, full string, stProbed, stFull redact.Stats) {
	probed = string(r.JSON(in, &stProbed))
	restore := redact.SetProbeEscaped(false)
	full = string(r.JSON(in, &stFull))
	restore()
	return probed, full, stProbed, stFull
}

// The probe that spares unescaping strings without an anchor changes
// nothing: every secret of every kind in every context (escaped ones
// among them, and with escapes right before and after a key's name), and
// every line of the samples, redact the same with and without it.
func TestJSON_ProbeChangesNothing(t *testing.T) {
	r := mustNew(t, redact.Config{})
	var docs []string
	for _, fk := range newFaker(3).all() {
		for _, c := range contexts {
			docs = append(docs, c.wrap(fk.Text))
		}
		// Escapes hugging the secret and its key.
		for _, s := range []string{"\n" + fk.Text + "\n", "\t" + fk.Text, "\"" + fk.Text + "\"", `\` + fk.Text} {
			docs = append(docs, string(must(json.Marshal(map[string]string{"text": s}))))
		}
	}
	for _, kv := range []string{
		"\ntoken=ghx8Kd93LkAq02ZpQw7R", "x\\ntoken: \"abc123XYZ987secret\"", "DB_PASSWORD\t=\tHunter2isNotAPassword9",
		"api_key\n= 'q8W3e7R1t5Y9u2I4o6P0'", "{\"client_secret\": \"s3cr3t-V4lue-Th4t-1s-L0ng\"}",
		"\"token\"\t:\t\"V4lue-Th4t-1s-L0ng-Enough\"", strings.Repeat("x", 130) + "token=abcdef0123456789XYZ",
	} {
		docs = append(docs, string(must(json.Marshal(map[string]string{"text": kv}))))
	}
	// Escapes that hide an anchor or an assignment in JSON printed in a
	// string (\\u0041KIA, https:\\/\\/, \\u with its digits escaped),
	// or an assignment (\u0022).
	for _, in := range []string{
		`{"stdout":"key \u0041KIAQWERTYUIOPASDFG1 and https:\/\/app:S3cretPassw0rd9@db.example.com\/x"}`,
		`{"stdout":"https:\/\/app:S3cretPassw0rd9@db.example.com\/x"}`,
		`{"stdout":"\u002d----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n-----END RSA PRIVATE KEY-----"}`,
		`{"config":"x \"api_key\u0022: \"q8W3e7R1t5Y9u2I4o6P0\""}`,
		`{"stdout":"key \\u\u0030041KIAQWERTYUIOPASDFG1"}`, // \u0041 once unescaped
	} {
		docs = append(docs, in, string(must(json.Marshal(map[string]string{"content": in}))))
	}
	lines, _ := corpusLines(t)
	for _, l := range lines {
		docs = append(docs, string(l))
	}
	found := 0
	for _, d := range docs {
		probed, full, sp, sf := jsonBoth(r, []byte(d))
		require.Equal(t, full, probed, "%q", d)
		require.Equal(t, sf, sp, "%q", d)
		found += int(sf.Total())
	}
	require.Greater(t, found, len(newFaker(3).all()), "the documents hold secrets")
}

// FuzzJSONProbe checks the probe against always unescaping on any input.
func FuzzJSONProbe(f *testing.F) {
	for _, fk := range newFaker(5).all() {
		for _, c := range contexts {
			if c.json {
				f.Add([]byte(c.wrap(fk.Text)))
			}
		}
	}
	r := mustNew(f, redact.Config{})
	f.Fuzz(func(t *testing.T, in []byte) {
		probed, full, sp, sf := jsonBoth(r, in)
		require.Equal(t, full, probed, "%q", in)
		require.Equal(t, sf, sp, "%q", in)
	})
}
