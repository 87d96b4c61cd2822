package formats

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// claudeLines returns n Claude Code user lines of session s.
func claudeLines(s string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"type":"user","uuid":"%s-%d","sessionId":"%s","timestamp":"2026-03-01T08:00:00.000Z","message":{"role":"user","content":"hi"}}`+"\n", s, i, s)
	}
	return b.String()
}

func TestFileReader_Read(t *testing.T) {
	dir := hostileDir(t)
	writeFile(t, filepath.Join(dir, "c", "big.jsonl"), claudeLines("big", 3*BatchSize+5))
	writeFile(t, filepath.Join(dir, "c", "half.jsonl"), claudeLines("half", 2)+`{"type":"user","uuid":"x"`)
	writeFile(t, filepath.Join(dir, "c", "notes.jsonl"), knowledge+"\n")
	writeFile(t, filepath.Join(dir, "c", "bad.jsonl"), claudeLines("bad", 1)+"{oops\n")
	data, err := os.ReadFile("pi/testdata/sessions.json")
	require.NoError(t, err)
	writeFile(t, filepath.Join(dir, "a", "sessions.json"), string(data))

	var mu sync.Mutex
	var lineErrs, fileErrs []string
	fr, err := NewFileReader(FileReaderConfig{
		Config:      parse.Config{Host: "h"},
		Workers:     3,
		OnLineError: func(err error) { mu.Lock(); lineErrs = append(lineErrs, err.Error()); mu.Unlock() },
		OnFileError: func(err error) { mu.Lock(); fileErrs = append(fileErrs, err.Error()); mu.Unlock() },
	})
	require.NoError(t, err)
	perFile := map[string][]string{}
	stores := 0
	err = fr.Read(t.Context(), []string{dir}, func(entries []schema.Entry) {
		require.NotEmpty(t, entries)
		require.LessOrEqual(t, len(entries), BatchSize+64)
		path := entries[0].Path
		for _, e := range entries {
			require.Equal(t, path, e.Path, "a batch holds one file")
			require.Equal(t, "h", e.Host)
			if e.Subtype == "sessions.json" {
				stores++
				continue
			}
			perFile[path] = append(perFile[path], e.EntryID)
		}
	})
	require.NoError(t, err)
	big := perFile[filepath.Join(dir, "c", "big.jsonl")]
	require.Len(t, big, 3*BatchSize+5)
	for i, id := range big {
		require.Equal(t, fmt.Sprintf("big-%d", i), id, "file order")
	}
	require.Equal(t, []string{"half-0", "half-1"}, perFile[filepath.Join(dir, "c", "half.jsonl")])
	require.NotZero(t, stores)

	st := fr.Stats()
	require.Equal(t, int64(5), st.Files, "s1, s2, big, half, bad")
	require.Equal(t, int64(1), st.Stores)
	require.Equal(t, int64(1), st.Skipped, "notes.jsonl")
	require.Equal(t, int64(2), st.NotRegular)
	require.Equal(t, int64(1), st.SkippedNames, "notes.txt")
	require.Equal(t, int64(1), st.Pending)
	require.Equal(t, int64(1), st.BadLines)
	require.Equal(t, int64(7), st.FilesFound)
	require.Len(t, lineErrs, 1)
	require.Contains(t, lineErrs[0], "bad.jsonl:2: offset")
	require.Len(t, fileErrs, 2)
}

func TestFileReader_NamedPathErrors(t *testing.T) {
	fr, err := NewFileReader(FileReaderConfig{})
	require.NoError(t, err)
	called := false
	err = fr.Read(t.Context(), []string{filepath.Join(t.TempDir(), "missing")}, func([]schema.Entry) { called = true })
	require.ErrorIs(t, err, os.ErrNotExist)
	require.False(t, called)
}

func TestFileReader_Cancelled(t *testing.T) {
	dir := t.TempDir()
	for i := range 8 {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i)), claudeLines(fmt.Sprint(i), 2*BatchSize))
	}
	fr, err := NewFileReader(FileReaderConfig{Workers: 2})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	batches := 0
	err = fr.Read(ctx, []string{dir}, func([]schema.Entry) {
		batches++
		cancel()
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 1, batches, "no batch is handed out after the cancellation")
}

// Each worker keeps the line buffer a long line grew from file to file:
// files that each hold a pasted image cost one grown buffer, not one
// per file (fresh memory the kernel faults in page by page).
func TestFileReader_KeepsGrownBuffer(t *testing.T) {
	dir := t.TempDir()
	image := `{"type":"user","uuid":"img-%d","sessionId":"s%d","timestamp":"2026-03-01T08:00:00.000Z","message":{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` +
		strings.Repeat("QUJD", 5<<18) + `"}}]}}` + "\n" // a 5 MB line
	const files = 4
	for i := range files {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("f%d.jsonl", i)), claudeLines(fmt.Sprint("a", i), 3)+fmt.Sprintf(image, i, i)+claudeLines(fmt.Sprint("b", i), 3))
	}
	fr, err := NewFileReader(FileReaderConfig{Workers: 1})
	require.NoError(t, err)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n := 0
	require.NoError(t, fr.Read(t.Context(), []string{dir}, func(entries []schema.Entry) { n += len(entries) }))
	runtime.ReadMemStats(&after)
	require.Equal(t, files*7, n)
	// One buffer of 16 MB and the entries' text; growing one per file
	// would allocate 4 × 14 MB (2 + 4 + 8).
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(28<<20))
}
