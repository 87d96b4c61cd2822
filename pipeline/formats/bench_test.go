package formats

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

const corpusDir = "../../testdata/corpus"

// benchFile is a corpus file split into lines once.
type benchFile struct {
	path   string
	format schema.Format
	lines  []jsonl.Line
	size   int64
}

func loadBenchCorpus(tb testing.TB, sub string) []benchFile {
	tb.Helper()
	var files []benchFile
	err := filepath.WalkDir(filepath.Join(corpusDir, sub), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f := benchFile{path: path, size: int64(len(data))}
		f.lines = formattest.Lines(tb, data)
		files = append(files, f)
		return nil
	})
	require.NoError(tb, err)
	require.NotEmpty(tb, files)
	// Detect once, so that the baseline parses what the decoder does.
	for i := range files {
		head := make([][]byte, 0, DetectLines)
		for _, l := range files[i].lines[:min(len(files[i].lines), DetectLines)] {
			head = append(head, l.Bytes)
		}
		files[i].format, err = detect(head)
		require.NoError(tb, err, files[i].path)
	}
	return files
}

// BenchmarkDecoder decodes the shipped sample transcripts of each format
// through a Decoder (detection, holding the first lines, per-line
// results) and, as the baseline, through the detected format's parser
// alone.
func BenchmarkDecoder(b *testing.B) {
	for _, sub := range []string{"claude-code", "codex", "pi"} {
		files := loadBenchCorpus(b, sub)
		var size, lines int64
		for _, f := range files {
			size += f.size
			lines += int64(len(f.lines))
		}
		b.Run(fmt.Sprintf("corpus=%s/path=decoder", sub), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(size)
			var entries int
			fn := func(r *Result) error { entries += len(r.Entries); return nil }
			for b.Loop() {
				for _, f := range files {
					d, err := NewDecoder(DecoderConfig{Config: parse.Config{Path: f.path}})
					if err != nil {
						b.Fatal(err)
					}
					for _, l := range f.lines {
						if err := d.Decode(l, fn); err != nil {
							b.Fatal(err)
						}
					}
					if err := d.End(true, fn); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
		})
		b.Run(fmt.Sprintf("corpus=%s/path=parser", sub), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(size)
			var dst []schema.Entry
			for b.Loop() {
				for _, f := range files {
					p, err := NewForFile(f.format, parse.Config{Path: f.path})
					if err != nil {
						b.Fatal(err)
					}
					for _, l := range f.lines {
						dst, _ = p.Parse(dst[:0], l)
					}
				}
			}
			b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}

// BenchmarkFileReader reads the shipped sample transcripts from disk with
// the parallel reader, as `sessionpipe sessions` does.
func BenchmarkFileReader(b *testing.B) {
	found, err := Walk([]string{corpusDir}, func(error) {})
	require.NoError(b, err)
	var size int64
	for _, f := range found {
		size += f.Size
	}
	b.ReportAllocs()
	b.SetBytes(size)
	for b.Loop() {
		fr, err := NewFileReader(FileReaderConfig{})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		if err := fr.Read(context.Background(), []string{corpusDir}, func(e []schema.Entry) { n += len(e) }); err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			b.Fatal("no entries")
		}
	}
}
