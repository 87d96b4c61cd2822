package alert

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse: any input parses or fails with a located error, never
// panics; parsed rules are valid for New as they are, with unique names.
func FuzzParse(f *testing.F) {
	f.Add([]byte(briefRules))
	f.Add([]byte(restartRules))
	f.Add([]byte("rules:\n" + benchRules))
	f.Add([]byte("rules:\n  - {name: r, scope: 'label:team', metric: projected_cost_usd, above: 5, window: month, timezone: Europe/Paris}\n"))
	f.Add([]byte("rules:\n  - name: r1\n   scope: session\n"))
	f.Add([]byte("rules: [{name: a, metric: unpriced_model}, {name: a}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rules, err := Parse("f.yaml", data)
		if err != nil {
			require.Nil(t, rules)
			require.NotEmpty(t, err.Error())
			return
		}
		_, err = New(Config{Rules: rules})
		require.NoError(t, err, "Parse(%q) gave rules New rejects", data)
		again, err := checkRules(rules)
		require.NoError(t, err)
		if len(rules) > 0 {
			require.Equal(t, rules, again, "normalising parsed rules changes nothing")
		}
	})
}
