package droid_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/droid"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// BenchmarkParse parses the settings golden case, as the tailer does at
// every rewrite.
func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile("testdata/settings/input.json")
	require.NoError(b, err)
	cfg := parse.Config{Path: "s.settings.json"}
	f, err := parse.Fields(data)
	require.NoError(b, err)
	entries, errs := droid.Parse(nil, cfg, data, f, time.Time{})
	require.Empty(b, errs)
	require.Len(b, entries, 1)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	var out []schema.Entry
	for b.Loop() {
		f, _ := parse.Fields(data)
		out, _ = droid.Parse(out[:0], cfg, data, f, time.Time{})
	}
}
