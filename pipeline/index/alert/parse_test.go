package alert

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// briefRules is the rules shape of issue 9, as written there.
const briefRules = `rules:
  - name: big-session          # subject token and id
    scope: session             # session | host | project | model | format | fleet
    metric: total_tokens       # total_tokens | input_tokens | output_tokens | cost_usd | tokens_per_minute | projected_cost_usd
    above: 1000000
`

func TestParse_Issue9Shape(t *testing.T) {
	rules, err := Parse("rules.yaml", []byte(briefRules))
	require.NoError(t, err)
	require.Equal(t, []Rule{{Name: "big-session", Scope: ScopeSession, Metric: MetricTotalTokens, Above: 1e6, Line: 2}}, rules)

	// The same with the window line of the issue, on a windowed scope.
	rules, err = Parse("rules.yaml", []byte(`rules:
  - name: host-hour
    scope: host
    metric: total_tokens
    above: 1000000
    window: 1h                 # sliding window for scopes other than session
`))
	require.NoError(t, err)
	require.Len(t, rules, 1)
	require.Equal(t, Window{Text: "1h", Size: time.Hour}, rules[0].Window)
}

func TestParse_EveryKind(t *testing.T) {
	src := `rules:
  - name: big-session
    description: one session past a million tokens
    scope: session
    metric: total_tokens
    above: 1000000
  - name: session-burn
    scope: session
    metric: tokens_per_minute
    above: 50000
  - name: host-hour
    scope: host
    metric: cost_usd
    above: 20
    rearm_below: 15
    window: 1h
  - name: project-day
    scope: project
    metric: output_tokens
    above: 2e6
    window: day
    timezone: Europe/Paris
  - name: model-input
    scope: model
    metric: input_tokens
    above: 1_000_000
    window: 7d
  - name: format-cache
    scope: format
    metric: cache_read_tokens
    above: 5e8
    window: 24h
  - name: fleet-budget
    scope: fleet
    metric: projected_cost_usd
    above: 200
    window: day
    rate_window: 30m
  - name: team-month
    scope: label:team
    metric: projected_cost_usd
    above: 5000
    window: month
  - name: unpriced
    metric: unpriced_model
`
	rules, err := Parse("rules.yaml", []byte(src))
	require.NoError(t, err)
	require.Len(t, rules, 9)
	byName := map[string]Rule{}
	for _, r := range rules {
		byName[r.Name] = r
	}
	require.Equal(t, "one session past a million tokens", byName["big-session"].Description)
	require.Equal(t, DefaultTokensPerMinuteWindow, byName["session-burn"].Window.Size)
	require.Equal(t, 15.0, byName["host-hour"].RearmBelow)
	require.Equal(t, PeriodDay, byName["project-day"].Window.Period)
	require.Equal(t, "Europe/Paris", byName["project-day"].Location.String())
	require.Equal(t, 1e6, byName["model-input"].Above)
	require.Equal(t, 7*24*time.Hour, byName["model-input"].Window.Size)
	require.Equal(t, 30*time.Minute, byName["fleet-budget"].RateWindow)
	require.Equal(t, DefaultRateWindow, byName["team-month"].RateWindow)
	label, ok := byName["team-month"].Scope.Label()
	require.True(t, ok)
	require.Equal(t, "team", label)
	require.Equal(t, ScopeModel, byName["unpriced"].Scope)
	require.Equal(t, 44, byName["unpriced"].Line)
}

func TestParse_Empty(t *testing.T) {
	for _, src := range []string{"", "# nothing\n", "rules:\n", "rules: []\n"} {
		rules, err := Parse("rules.yaml", []byte(src))
		require.NoError(t, err, "Parse(%q)", src)
		require.Empty(t, rules, "Parse(%q)", src)
	}
}

func TestParse_Invalid(t *testing.T) {
	const head = "rules:\n"
	rule := func(lines string) string { return head + "  - name: r1\n" + lines }
	tests := []struct {
		name    string
		src     string
		wantErr error
		want    string
	}{
		{"UnknownScope", rule("    scope: team\n    metric: total_tokens\n    above: 1\n"),
			ErrUnknownScope, `rules.yaml:3: rule "r1": alert: unknown scope: "team": want session, host, project, model, format, fleet or label:<name>`},
		{"UnknownMetric", rule("    scope: host\n    metric: tokens\n    above: 1\n    window: 1h\n"),
			ErrUnknownMetric, `rules.yaml:4: rule "r1": alert: unknown metric: "tokens": want one of total_tokens, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, tokens_per_minute, projected_cost_usd, unpriced_model`},
		{"MissingName", head + "  - scope: host\n    metric: total_tokens\n    above: 1\n    window: 1h\n",
			ErrMissingField, `rules.yaml:2: alert: missing field: name`},
		{"MissingAbove", rule("    scope: session\n    metric: total_tokens\n"),
			ErrMissingField, `rules.yaml:2: rule "r1": alert: missing field: above`},
		{"MissingScope", rule("    metric: total_tokens\n    above: 1\n"),
			ErrMissingField, `rules.yaml:2: rule "r1": alert: missing field: scope`},
		{"MissingMetric", rule("    scope: session\n    above: 1\n"),
			ErrMissingField, `rules.yaml:2: rule "r1": alert: missing field: metric`},
		{"MissingWindow", rule("    scope: host\n    metric: cost_usd\n    above: 1\n"),
			ErrMissingField, `rules.yaml:2: rule "r1": alert: missing field: window (scope host keeps cost_usd over a window: e.g. 1h, 24h, day, month)`},
		{"DuplicateName", head + "  - name: r1\n    scope: session\n    metric: cost_usd\n    above: 1\n  - name: r1\n    scope: session\n    metric: cost_usd\n    above: 2\n",
			ErrDuplicateName, `rules.yaml:6: rule "r1": alert: duplicate rule name: also at line 2`},
		{"NameWithDot", head + "  - name: big.session\n    scope: session\n    metric: cost_usd\n    above: 1\n",
			ErrInvalidName, `rules.yaml:2: rule "big.session": alert: invalid rule name: "big.session": use 1 to 64 letters, digits, '-' and '_' (it is a subject token)`},
		{"NameWithWildcard", head + "  - name: '>'\n    scope: session\n    metric: cost_usd\n    above: 1\n",
			ErrInvalidName, `rules.yaml:2: rule ">": alert: invalid rule name: ">": use 1 to 64 letters, digits, '-' and '_' (it is a subject token)`},
		{"WindowOnSession", rule("    scope: session\n    metric: total_tokens\n    above: 1\n    window: 1h\n"),
			ErrWindow, `rules.yaml:6: rule "r1": alert: invalid window: a session-scope total_tokens is the session's running total; a window means nothing there`},
		{"ProjectedOnSession", rule("    scope: session\n    metric: projected_cost_usd\n    above: 1\n    window: day\n"),
			ErrWindow, `rules.yaml:3: rule "r1": alert: invalid window: projected_cost_usd needs a budget period; session scope has none`},
		{"ProjectedOddPeriod", rule("    scope: fleet\n    metric: projected_cost_usd\n    above: 1\n    window: 7h\n"),
			ErrWindow, `rules.yaml:6: rule "r1": alert: invalid window: "7h": a projection period is day, week, month, or a duration dividing 24h (1h, 6h, 24h …)`},
		{"RateOnCalendar", rule("    scope: fleet\n    metric: tokens_per_minute\n    above: 1\n    window: day\n"),
			ErrWindow, `rules.yaml:6: rule "r1": alert: invalid window: "day": tokens_per_minute needs a duration (the rate's window), not a calendar period`},
		{"WindowTooShort", rule("    scope: host\n    metric: cost_usd\n    above: 1\n    window: 10s\n"),
			ErrWindow, `rules.yaml:6: rule "r1": alert: invalid window: "10s": want at least 1m0s`},
		{"WindowNotDuration", rule("    scope: host\n    metric: cost_usd\n    above: 1\n    window: hourly\n"),
			ErrInvalidValue, `rules.yaml:6: rule "r1": alert: invalid value: window "hourly": want a duration such as 1h, 7d, or day, week, month`},
		{"ZeroWindow", rule("    scope: session\n    metric: cost_usd\n    above: 1\n    window: 0s\n"),
			ErrInvalidValue, `rules.yaml:6: rule "r1": alert: invalid value: window "0s": want a duration such as 1h, 7d, or day, week, month`},
		{"NegativeRateWindow", rule("    scope: fleet\n    metric: projected_cost_usd\n    above: 1\n    window: day\n    rate_window: -1h\n"),
			ErrInvalidValue, `rules.yaml:7: rule "r1": alert: invalid value: rate_window "-1h": want a duration such as 30m, 1h`},
		{"NegativeAbove", rule("    scope: session\n    metric: cost_usd\n    above: -5\n"),
			ErrInvalidValue, `rules.yaml:5: rule "r1": alert: invalid value: above -5: want a number >= 0`},
		{"AboveNotNumber", rule("    scope: session\n    metric: cost_usd\n    above: lots\n"),
			ErrInvalidValue, `rules.yaml:5: rule "r1": alert: invalid value: above "lots": want a number`},
		{"RearmAboveThreshold", rule("    scope: host\n    metric: cost_usd\n    above: 5\n    rearm_below: 6\n    window: 1h\n"),
			ErrInvalidValue, `rules.yaml:6: rule "r1": alert: invalid value: rearm_below 6: want a number between 0 and above (5)`},
		{"RearmOnSession", rule("    scope: session\n    metric: cost_usd\n    above: 5\n    rearm_below: 1\n"),
			ErrInvalidValue, `rules.yaml:6: rule "r1": alert: invalid value: rearm_below: session-scope rules fire once per session and never re-arm`},
		{"UnknownField", rule("    scope: session\n    metric: cost_usd\n    above: 5\n    treshold: 6\n"),
			ErrUnknownField, `rules.yaml:6: rule "r1": alert: unknown field: "treshold" (known: name, description, scope, metric, above, rearm_below, window, rate_window, timezone)`},
		{"UnknownTopField", "rule:\n  - name: r1\n",
			ErrUnknownField, `rules.yaml:1: alert: unknown field: "rule" (the file holds one field, rules)`},
		{"FieldTwice", rule("    scope: session\n    metric: cost_usd\n    above: 5\n    above: 6\n"),
			ErrSyntax, `rules.yaml:6: rule "r1": alert: invalid rules file: field above given twice (also at line 5)`},
		{"UnpricedWithThreshold", rule("    metric: unpriced_model\n    above: 1\n"),
			ErrInvalidValue, `rules.yaml:4: rule "r1": alert: invalid value: unpriced_model has no threshold`},
		{"UnpricedOnHost", rule("    metric: unpriced_model\n    scope: host\n"),
			ErrUnknownScope, `rules.yaml:4: rule "r1": alert: unknown scope: unpriced_model fires once per model: scope is model (or omitted)`},
		{"TimezoneOnSliding", rule("    scope: host\n    metric: cost_usd\n    above: 5\n    window: 1h\n    timezone: UTC\n"),
			ErrInvalidValue, `rules.yaml:7: rule "r1": alert: invalid value: timezone is only for calendar periods (day, week, month, or a projection period)`},
		{"UnknownTimezone", rule("    scope: host\n    metric: cost_usd\n    above: 5\n    window: day\n    timezone: Mars/Olympus\n"),
			ErrInvalidValue, `rules.yaml:7: rule "r1": alert: invalid value: timezone "Mars/Olympus": unknown time zone Mars/Olympus`},
		{"EmptyLabel", rule("    scope: 'label:'\n    metric: cost_usd\n    above: 5\n    window: 1h\n"),
			ErrUnknownScope, `rules.yaml:3: rule "r1": alert: unknown scope: "label:": want session, host, project, model, format, fleet or label:<name>`},
		{"RulesNotList", "rules: big\n",
			ErrSyntax, `rules.yaml:1: alert: invalid rules file: rules: want a list of rules`},
		{"RuleNotMapping", "rules:\n  - big\n",
			ErrSyntax, `rules.yaml:2: alert: invalid rules file: a rule is a mapping of fields`},
		{"NestedValue", rule("    scope: [session]\n    metric: cost_usd\n    above: 5\n"),
			ErrInvalidValue, `rules.yaml:3: rule "r1": alert: invalid value: scope: want a single value`},
		{"BadYAML", "rules:\n  - name: r1\n   scope: session\n",
			ErrSyntax, `rules.yaml:3: alert: invalid rules file: did not find expected '-' indicator`},
		{"BadIndentLater", briefRules + "  - name: r2\n    scope: session\n   metric: cost_usd\n",
			ErrSyntax, `rules.yaml:8: alert: invalid rules file: did not find expected '-' indicator`},
		{"Tab", "rules:\n\t- name: r1\n",
			ErrSyntax, `rules.yaml:2: alert: invalid rules file: found character that cannot start any token`},
		{"TwoDocuments", briefRules + "---\nrules: []\n",
			ErrSyntax, `rules.yaml:6: alert: invalid rules file: a second YAML document (want one)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules, err := Parse("rules.yaml", []byte(tt.src))
			require.Error(t, err, "Parse(%q)", tt.src)
			require.Nil(t, rules)
			require.ErrorIs(t, err, tt.wantErr)
			var re *RuleError
			require.ErrorAs(t, err, &re)
			require.Equal(t, tt.want, err.Error())
		})
	}
}

func TestParse_EveryErrorReported(t *testing.T) {
	src := `rules:
  - name: a
    scope: galaxy
    metric: total_tokens
    above: 1
  - name: b
    scope: session
    metric: total_tokens
    above: 1
  - name: c
    scope: session
    metric: watts
    above: 1
`
	_, err := Parse("r.yaml", []byte(src))
	require.ErrorIs(t, err, ErrUnknownScope)
	require.ErrorIs(t, err, ErrUnknownMetric)
	require.Equal(t, `r.yaml:3: rule "a": alert: unknown scope: "galaxy": want session, host, project, model, format, fleet or label:<name>
r.yaml:12: rule "c": alert: unknown metric: "watts": want one of total_tokens, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, tokens_per_minute, projected_cost_usd, unpriced_model`, err.Error())
}

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte(briefRules), 0o600))
	rules, err := Load(path)
	require.NoError(t, err)
	require.Len(t, rules, 1)

	_, err = Load(filepath.Join(t.TempDir(), "missing.yaml"))
	require.ErrorIs(t, err, os.ErrNotExist)

	require.NoError(t, os.WriteFile(path, []byte("rules:\n  - name: x\n    metric: cost_usd\n    scope: nowhere\n"), 0o600))
	_, err = Load(path)
	var re *RuleError
	require.True(t, errors.As(err, &re))
	require.Equal(t, path, re.Path)
	require.Equal(t, 4, re.Line)
}
