package alert

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/schema"
)

// benchRules are ten rules, one of each kind and scope.
const benchRules = `
  - {name: big-session, scope: session, metric: total_tokens, above: 1e15}
  - {name: session-burn, scope: session, metric: tokens_per_minute, above: 1e12}
  - {name: host-hour, scope: host, metric: cost_usd, above: 1e6, window: 1h}
  - {name: project-day, scope: project, metric: output_tokens, above: 1e9, window: day}
  - {name: model-week, scope: model, metric: input_tokens, above: 1e12, window: 7d}
  - {name: format-rate, scope: format, metric: tokens_per_minute, above: 1e9, window: 10m}
  - {name: fleet-budget, scope: fleet, metric: projected_cost_usd, above: 1e9, window: day}
  - {name: team-month, scope: label:team, metric: projected_cost_usd, above: 1e9, window: month}
  - {name: fleet-cache, scope: fleet, metric: cache_read_tokens, above: 1e13, window: 24h}
  - {name: unpriced, metric: unpriced_model}
`

// BenchmarkEvaluator_Observe measures observations evaluated per second
// against the ten benchRules, with calls 10 ms apart spread over
// `sessions` sessions, 20 hosts, 50 projects, 5 models, 3 formats and 4
// teams.
func BenchmarkEvaluator_Observe(b *testing.B) {
	for _, sessions := range []int{1000, 100_000} {
		b.Run(fmt.Sprintf("rules=10/sessions=%d", sessions), func(b *testing.B) {
			templates := make([]Observation, 4096)
			formats := []schema.Format{schema.FormatClaudeCode, schema.FormatCodex, schema.FormatPi}
			for i := range templates {
				templates[i] = Observation{
					Host:    fmt.Sprintf("host-%02d", i%20),
					Project: fmt.Sprintf("/home/dev/src/project-%02d", i%50),
					Model:   fmt.Sprintf("model-%d", i%5),
					Format:  formats[i%3],
					Labels:  map[string]string{"team": fmt.Sprintf("team-%d", i%4)},
					Tokens:  schema.Usage{Input: 12, Output: 480, CacheRead: 88_000, CacheWrite: 1_500},
					CostUSD: 0.06,
				}
			}
			sessionIDs := make([]string, sessions)
			for i := range sessionIDs {
				sessionIDs[i] = fmt.Sprintf("5f3a9c1e-%04x-4c1b-9d2e-%012x", i%65536, i)
			}
			now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
			e, err := New(Config{Rules: mustRules(b, benchRules), Now: func() time.Time { return now }})
			require.NoError(b, err)
			require.Len(b, e.Rules(), 10)
			var fired int
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				o := templates[i%len(templates)]
				o.Seq = uint64(i + 1)
				o.SessionID = sessionIDs[i%len(sessionIDs)]
				now = now.Add(10 * time.Millisecond)
				o.Time = now
				fired += len(e.Observe(o))
				i++
			}
			b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "obs/s")
			require.Equal(b, uint64(i), e.Stats().Observations)
			require.Zero(b, fired, "thresholds are out of reach: the benchmark measures the common path")
		})
	}
}

// BenchmarkEvaluator_KeyMemory reports the heap held per session key by
// a session-scope sum rule and by a session-scope tokens_per_minute rule
// (a 60-bucket window each).
func BenchmarkEvaluator_KeyMemory(b *testing.B) {
	for _, rule := range []string{
		"  - {name: r, scope: session, metric: total_tokens, above: 1e15}\n",
		"  - {name: r, scope: session, metric: tokens_per_minute, above: 1e15}\n",
	} {
		rules := mustRules(b, rule)
		b.Run("metric="+string(rules[0].Metric), func(b *testing.B) {
			const n = 100_000
			ids := make([]string, n)
			for i := range ids {
				ids[i] = fmt.Sprintf("5f3a9c1e-%012x", i)
			}
			now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
			var perKey float64
			for b.Loop() {
				e, err := New(Config{Rules: rules, Now: func() time.Time { return now }})
				require.NoError(b, err)
				before := heapInUse()
				for _, id := range ids {
					e.Observe(Observation{SessionID: id, Time: now, Tokens: schema.Usage{Input: 1}})
				}
				perKey = float64(heapInUse()-before) / n
				require.Equal(b, n, e.Stats().Keys)
			}
			b.ReportMetric(perKey, "B/key")
		})
	}
}

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// TestEvaluator_ObserveDoesNotAllocate pins the common path (an existing
// key, no firing) at zero allocations for every rule kind.
func TestEvaluator_ObserveDoesNotAllocate(t *testing.T) {
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	e, err := New(Config{Rules: mustRules(t, benchRules), Now: func() time.Time { return now }})
	require.NoError(t, err)
	o := Observation{SessionID: "s", Host: "h", Project: "/p", Model: "m", Format: schema.FormatCodex,
		Labels: map[string]string{"team": "t"}, Tokens: schema.Usage{Input: 10, Output: 10}, CostUSD: 0.01}
	e.Observe(o) // make the keys
	allocs := testing.AllocsPerRun(1000, func() {
		now = now.Add(time.Second)
		o.Time = now
		if evs := e.Observe(o); evs != nil {
			t.Fatalf("Observe fired %v", evs)
		}
	})
	require.Zero(t, allocs)
	require.Equal(t, 8, e.Stats().Keys, "a key per rule but fleet-cache (no cache reads) and unpriced (a priced call)")
}
