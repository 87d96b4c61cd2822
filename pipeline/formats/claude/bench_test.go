package claude_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/claude"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// corpusDir holds the shared real transcripts (see its SOURCES.md).
const corpusDir = "../../../testdata/corpus/claude-code"

// corpusFile is one transcript split into lines.
type corpusFile struct {
	path  string
	lines []jsonl.Line
	size  int
}

// loadCorpus reads every Claude Code transcript of the shared corpus and
// splits it into lines.
func loadCorpus(tb testing.TB) ([]corpusFile, int64) {
	tb.Helper()
	var files []corpusFile
	var total int64
	err := filepath.WalkDir(corpusDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".jsonl" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f := corpusFile{path: path, size: len(data)}
		f.lines = formattest.Lines(tb, data)
		files = append(files, f)
		total += int64(len(data))
		return nil
	})
	require.NoError(tb, err)
	require.NotEmpty(tb, files)
	return files, total
}

// BenchmarkParse parses the whole shared corpus (real transcripts of
// Claude Code 1.0.98 to 2.1.173), one parser per file, as
// `sessionpipe sessions` does (text=false) and as `entries` does
// (text=true). The skip baseline only validates each line with the
// scanner: the ceiling a parser built on it can reach.
func BenchmarkParse(b *testing.B) {
	files, total := loadCorpus(b)
	var lines int
	for _, f := range files {
		lines += len(f.lines)
	}
	for _, text := range []bool{false, true} {
		name := "text=false"
		if text {
			name = "text=true"
		}
		b.Run(name, func(b *testing.B) {
			// Checked before timing: every line parses.
			for _, f := range files {
				p := claude.New(parse.Config{Path: f.path, Text: text})
				for _, l := range f.lines {
					_, err := p.Parse(nil, l)
					require.NoError(b, err, "%s:%d", f.path, l.Number)
				}
			}
			b.SetBytes(total)
			b.ReportAllocs()
			var dst []schema.Entry
			for b.Loop() {
				for _, f := range files {
					p := claude.New(parse.Config{Path: f.path, Text: text})
					for _, l := range f.lines {
						dst, _ = p.Parse(dst[:0], l)
					}
				}
			}
			b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
		})
	}
	b.Run("baseline=skip", func(b *testing.B) {
		b.SetBytes(total)
		b.ReportAllocs()
		var s jsonl.Scanner
		for b.Loop() {
			for _, f := range files {
				for _, l := range f.lines {
					s.Reset(l.Bytes)
					for s.More() {
						s.Finish()
					}
				}
			}
		}
	})
}
