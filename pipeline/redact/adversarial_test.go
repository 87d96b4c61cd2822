package redact_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/redact"
)

// adversarial are inputs where every few bytes hold an anchor inside one
// long run of a token's alphabet: each must cost about one pass, not one
// pass per anchor (512 KiB of them would take minutes quadratically).
var adversarial = []string{
	"sk-", "sk-ant-", "glpat-", "xoxb-", "AccountKey=", "SharedAccessKey=", "tokentoken_", "password.",
	"secret-", "-----BEGIN PRIVATE KEY-----\nAAAA\n", "eyJhbGciOiJIUzI1NiJ9.", "a://b:c", "&sig=", "AIza",
	"Authorization: Bearer ", "\\u0073k-", "\\\"password\\\":\\\"", "ghp_", "hooks.slack.com/services/",
}

func TestRedactor_LinearOnRepeatedAnchors(t *testing.T) {
	r := mustNew(t, redact.Config{})
	for _, unit := range adversarial {
		s := strings.Repeat(unit, (512<<10)/len(unit))
		var st redact.Stats
		out := r.String(s, &st)
		require.Equal(t, out, r.String(out, nil), "%q: not idempotent", unit)
		j := r.JSON([]byte(`{"a":"`+strings.ReplaceAll(s, `"`, `\"`)+`"}`), nil)
		require.NotEmpty(t, j)
	}
}
