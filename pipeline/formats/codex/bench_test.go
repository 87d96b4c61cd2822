package codex_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/codex"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// BenchmarkParse parses the real rollouts of the corpus (Codex Desktop
// 0.104, 2,038 lines in all), one fresh parser per file as the tailer
// does, with and without text extraction.
func BenchmarkParse(b *testing.B) {
	paths, err := filepath.Glob(filepath.Join("testdata", "localpush-*", "input.jsonl"))
	require.NoError(b, err)
	require.NotEmpty(b, paths)
	type file struct {
		data  []byte
		lines int
	}
	var files []file
	var size int64
	nlines := 0
	for _, path := range paths {
		data := mustReadCase(b, filepath.Base(filepath.Dir(path)))
		n := len(formattest.Lines(b, data))
		files = append(files, file{data, n})
		size += int64(len(data))
		nlines += n
	}
	for _, text := range []bool{false, true} {
		b.Run(fmt.Sprintf("text=%t", text), func(b *testing.B) {
			cfg := parse.Config{Text: text}
			lines := make([][]jsonl.Line, len(files))
			for i, f := range files {
				lines[i] = formattest.Lines(b, f.data)
				// Check the fixture before timing.
				entries := mustParse(b, cfg, f.data)
				require.Len(b, entries, f.lines)
			}
			b.ReportAllocs()
			b.SetBytes(size)
			var entries []schema.Entry
			for b.Loop() {
				for _, fl := range lines {
					p := codex.New(cfg)
					for _, l := range fl {
						entries, _ = p.Parse(entries[:0], l)
					}
				}
			}
			b.ReportMetric(float64(nlines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}
