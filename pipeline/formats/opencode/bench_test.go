package opencode_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/internal/testutil/opencodetest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/opencode"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// BenchmarkParse parses the session golden case (eight rows in their JSON
// form).
func BenchmarkParse(b *testing.B) {
	data := formattest.ReadFile(b, filepath.Join("testdata", "session", "input.jsonl"))
	lines := formattest.Lines(b, data)
	cfg := parse.Config{Path: "/h/opencode.db"}
	entries, errs := formattest.ParseAll(b, opencode.New(cfg), data)
	require.Empty(b, errs)
	require.Len(b, entries, len(lines))
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	var out []schema.Entry
	p := opencode.New(cfg)
	for b.Loop() {
		for _, l := range lines {
			out, _ = p.Parse(out[:0], l)
		}
	}
	b.ReportMetric(float64(len(lines))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkReadDB reads a database of n messages whole, as the offline
// commands do (and the tailer's first poll).
func BenchmarkReadDB(b *testing.B) {
	rows := loadRows(b, "testdata/session/input.jsonl")
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "opencode.db")
			w := opencodetest.Create(b, path)
			w.Exec("BEGIN")
			for i := range n {
				r := rows[i%len(rows)]
				r.ID = fmt.Sprintf("msg_%08d", i)
				r.TimeUpdated += int64(i)
				w.Put(r)
			}
			w.Exec("COMMIT")
			b.ReportAllocs()
			for b.Loop() {
				got, err := opencode.ReadDB(b.Context(), path, parse.Config{}, func(*schema.Entry) {}, nil)
				require.NoError(b, err)
				require.EqualValues(b, n, got)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
