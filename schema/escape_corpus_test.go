package schema_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"testing"

	segjson "github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// corpusTexts returns the text fields of every entry of the shared real
// transcripts: message text, thinking, tool inputs and results.
func corpusTexts(tb testing.TB) (texts []string, size int64) {
	tb.Helper()
	err := filepath.WalkDir("../testdata/corpus", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".jsonl" {
			return err
		}
		_, err = formats.ReadFile(context.Background(), path, formats.ReadConfig{Config: parse.Config{Path: path, Text: true}},
			func(e *schema.Entry) {
				for _, t := range []string{e.Text} {
					if t != "" {
						texts = append(texts, t)
					}
				}
				for _, r := range e.ToolResults {
					texts = append(texts, r.Content)
				}
			}, func(error) {})
		if err == formats.ErrUnknownFormat {
			return nil
		}
		return err
	})
	require.NoError(tb, err)
	require.NotEmpty(tb, texts)
	for _, t := range texts {
		size += int64(len(t))
	}
	return texts, size
}

// TestAppendString_Corpus checks the escaper against segmentio on every
// text of the real transcripts.
func TestAppendString_Corpus(t *testing.T) {
	texts, _ := corpusTexts(t)
	for _, s := range texts {
		if got, want := schema.AppendString(nil, s), segjson.AppendEscape(nil, s, 0); string(got) != string(want) {
			t.Fatalf("AppendString(%.80q…) differs from segmentio", s)
		}
	}
}

// BenchmarkAppendString_Corpus escapes every text of the real transcripts.
func BenchmarkAppendString_Corpus(b *testing.B) {
	texts, size := corpusTexts(b)
	for _, impl := range []struct {
		name string
		fn   func([]byte, string) []byte
	}{
		{"sessionpipe", schema.AppendString},
		{"segmentio", func(b []byte, s string) []byte { return segjson.AppendEscape(b, s, 0) }},
	} {
		b.Run("impl="+impl.name, func(b *testing.B) {
			var buf []byte
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				for _, s := range texts {
					buf = impl.fn(buf[:0], s)
				}
			}
		})
	}
}
