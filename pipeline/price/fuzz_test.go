package price_test

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

// FuzzLoad feeds arbitrary documents to Load: it must either fail with a
// located error inside the input, or give a table whose every model looks
// itself up and prices a call at a finite, non-negative cost.
func FuzzLoad(f *testing.F) {
	embedded, err := os.ReadFile("prices.json")
	require.NoError(f, err)
	f.Add(embedded)
	f.Add([]byte(`{"m": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "provider_specific_entry": {"fast": 2}}}`))
	f.Add([]byte(`{"m": {"input_cost_per_token": 1, "output_cost_per_token": 1, "input_cost_per_token_above_272k_tokens": 2}}`))
	f.Add([]byte(`{"m": {"input_cost_per_token": "1"}}`))
	f.Add([]byte(`[]`))
	md, err := os.ReadFile("modelsdev.json")
	require.NoError(f, err)
	f.Add(md)
	hist, err := os.ReadFile("history.json")
	require.NoError(f, err)
	f.Add(hist)
	f.Add([]byte(`{"m": {"cost": {"input": 1, "output": 2, "tiers": [{"input": 3, "tier": {"type": "context", "size": 10}}]},
  "periods": [{"valid_until": "2025-01-01", "cost": {"input": 5}}, {"valid_from": "2025-02-01T00:00:00.5Z", "input_cost_per_token": 0}]}}`))
	u := schema.Usage{Input: 300000, Output: 300000, CacheRead: 300000, CacheWrite: 600000, CacheWrite5m: 300000, CacheWrite1h: 300000}
	f.Fuzz(func(t *testing.T, doc []byte) {
		table, err := price.Load(bytes.NewReader(doc))
		if err != nil {
			var de *schema.DecodeError
			require.ErrorAs(t, err, &de)
			assert.True(t, errors.Is(err, price.ErrSyntax) || errors.Is(err, price.ErrShape) || errors.Is(err, price.ErrBadRate) ||
				errors.Is(err, price.ErrPeriod), "%v", err)
			assert.GreaterOrEqual(t, de.Offset, int64(0))
			assert.LessOrEqual(t, de.Offset, int64(len(doc)))
			assert.GreaterOrEqual(t, de.Line, int64(1))
			return
		}
		for _, m := range table.Models() {
			p, ok := table.Lookup(m)
			if m == "" || m == "<synthetic>" {
				assert.False(t, ok)
				continue
			}
			require.True(t, ok, "Lookup(%q)", m)
			fast := u
			fast.Speed = "fast"
			usd, ok := table.Cost(m, fast)
			require.True(t, ok)
			assert.GreaterOrEqual(t, usd, 0.0, "%q at %+v", m, p)
		}
		for _, p := range table.Prices() {
			if p.Model == "" || p.Model == "<synthetic>" {
				continue // never priced (the loop above)
			}
			var ats []time.Time
			if !p.ValidFrom.IsZero() {
				ats = append(ats, p.ValidFrom)
			}
			if !p.ValidUntil.IsZero() {
				ats = append(ats, p.ValidUntil.Add(-time.Microsecond))
			}
			for _, at := range ats {
				got, ok := table.LookupAt(p.Model, at)
				require.True(t, ok)
				assert.Equal(t, p, got, "%q at %s holds its period", p.Model, at)
			}
		}
	})
}
