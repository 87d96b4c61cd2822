package formats

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

func writeFile(tb testing.TB, path, content string) string {
	tb.Helper()
	require.NoError(tb, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(tb, os.WriteFile(path, []byte(content), 0o644))
	return path
}

func readAll(tb testing.TB, path string, cfg ReadConfig) ([]schema.Entry, []error, FileStats, error) {
	tb.Helper()
	var entries []schema.Entry
	var errs []error
	st, err := ReadFile(tb.Context(), path, cfg, func(e *schema.Entry) { entries = append(entries, *e) }, func(err error) { errs = append(errs, err) })
	return entries, errs, st, err
}

// A last line without "\n" is not read, even when it holds complete JSON:
// the tailer would wait for its newline, and so does offline reading.
func TestReadFile_IncompleteLastLineIsPending(t *testing.T) {
	last := strings.Replace(claudeUser, `"u1"`, `"u2"`, 1)
	path := writeFile(t, filepath.Join(t.TempDir(), "s.jsonl"), claudeUser+"\n"+last)
	entries, errs, st, err := readAll(t, path, ReadConfig{})
	require.NoError(t, err)
	require.Empty(t, errs, "a pending line is not an error of the file")
	require.Len(t, entries, 1)
	require.Equal(t, "u1", entries[0].EntryID)
	require.Equal(t, int64(len(last)), st.Pending)
	require.Equal(t, int64(1), st.Lines)
	require.Equal(t, int64(len(claudeUser)+1), st.Bytes)

	// Blank trailing bytes are nothing pending.
	path = writeFile(t, filepath.Join(t.TempDir(), "s.jsonl"), claudeUser+"\n  ")
	_, _, st, err = readAll(t, path, ReadConfig{})
	require.NoError(t, err)
	require.Zero(t, st.Pending)
}

func TestReadFile_OverLongLineNamesTheLimit(t *testing.T) {
	big := `{"type":"user","uuid":"u0","sessionId":"s1","message":{"role":"user","content":"` + strings.Repeat("x", 3000) + `"}}`
	path := writeFile(t, filepath.Join(t.TempDir(), "s.jsonl"), big+"\n"+claudeUser+"\n")
	entries, errs, st, err := readAll(t, path, ReadConfig{MaxLineBytes: 1024})
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.Len(t, errs, 1)
	require.Equal(t, path+":1: offset 0: line of 3083 bytes exceeds -max-line-bytes 1024", errs[0].Error())
	require.Equal(t, int64(1), st.Errors)
}

func TestReadFile_OnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	link := filepath.Join(dir, "zero.jsonl")
	require.NoError(t, os.Symlink("/dev/zero", link))
	for _, path := range []string{fifo, "/dev/zero", link, dir} {
		done := make(chan error, 1)
		go func() {
			_, _, _, err := readAll(t, path, ReadConfig{})
			done <- err
		}()
		select {
		case err := <-done:
			require.ErrorIs(t, err, ErrNotRegular, path)
		case <-time.After(10 * time.Second):
			t.Fatalf("ReadFile(%s) hangs", path) // a FIFO blocks in open(), /dev/zero never ends
		}
	}
}

// endless is a reader of a file that never ends and has no newline; it
// cancels the read's context once it has given limit bytes, and gives
// io.EOF after twice that.
type endless struct {
	n, limit int64
	cancel   context.CancelFunc
}

func (e *endless) Read(p []byte) (int, error) {
	if e.n >= 2*e.limit {
		return 0, io.EOF
	}
	if e.n >= e.limit {
		e.cancel()
	}
	clear(p)
	e.n += int64(len(p))
	return len(p), nil
}

// Cancellation stops a read in the middle of one long line, not at the
// next line.
func TestRead_CancelledInsideALongLine(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	src := &endless{limit: 64 << 20, cancel: cancel}
	_, err := Read(ctx, src, ReadConfig{Format: schema.FormatClaudeCode, MaxLineBytes: 1 << 20}, func(*schema.Entry) {}, func(error) {})
	require.ErrorIs(t, err, context.Canceled)
	require.LessOrEqual(t, src.n, src.limit+2<<20, "reading went on after the cancellation")
}

func TestReadFile_Missing(t *testing.T) {
	_, _, _, err := readAll(t, filepath.Join(t.TempDir(), "gone.jsonl"), ReadConfig{})
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestReadSessionStore(t *testing.T) {
	data, err := os.ReadFile("pi/testdata/sessions.json")
	require.NoError(t, err)
	entries, err := ReadSessionStore(strings.NewReader(string(data)), parse.Config{Host: "h", Path: "/a/sessions.json"})
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	for i, e := range entries {
		require.Equal(t, schema.FormatPi, e.Format)
		require.Equal(t, schema.KindSession, e.Kind)
		require.Equal(t, "/a/sessions.json", e.Path)
		require.Equal(t, "h", e.Host)
		require.Nil(t, e.Usage)
		if i > 0 {
			require.Less(t, entries[i-1].SessionID, e.SessionID, "sorted by session id")
		}
	}
	_, err = ReadSessionStore(strings.NewReader("[1]"), parse.Config{Path: "/a/sessions.json"})
	require.ErrorContains(t, err, "/a/sessions.json")
	require.True(t, IsSessionStore("/a/sessions.json"))
	require.False(t, IsSessionStore("/a/sessions.jsonl"))
}

// jsonl's reader reports an error other than io.EOF as is.
type failing struct{}

func (failing) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestRead_ReadError(t *testing.T) {
	_, err := Read(t.Context(), failing{}, ReadConfig{Config: parse.Config{Path: "x.jsonl"}, Reader: jsonl.NewReader(nil, jsonl.ReaderConfig{})}, func(*schema.Entry) {}, func(error) {})
	require.ErrorContains(t, err, "read x.jsonl: disk on fire")
}
