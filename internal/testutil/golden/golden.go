// Package golden runs the golden tests of the transcript parsers: each
// directory testdata/<case>/ holds input.jsonl, the entries wanted
// (want.jsonl, canonical JSON, one per line) and the errors wanted
// (want.err, one per line; absent when none). Every case is fed whole,
// one byte at a time, and split at every line's midpoint, and must give
// the same result each way. Run the tests with -update to rewrite the
// want files from the current output.
package golden

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

var update = flag.Bool("update", false, "rewrite golden want files")

// Parser is what the golden harness drives: any format parser.
type Parser interface {
	Parse(dst []schema.Entry, line jsonl.Line) ([]schema.Entry, error)
}

// Result is the output of one run: entries in canonical JSON and errors.
type Result struct {
	Entries []byte // canonical JSON lines
	Errors  []byte // error strings, one per line
}

// Run runs every case directory under dir (normally "testdata").
// newParser creates a fresh parser for each run over a case's input: a
// format's New, such as claude.New.
func Run[P Parser](t *testing.T, dir string, newParser func(cfg parse.Config) P) {
	t.Helper()
	cases, err := filepath.Glob(filepath.Join(dir, "*", "input.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, cases, "no golden cases under %s", dir)
	for _, in := range cases {
		caseDir := filepath.Dir(in)
		t.Run(filepath.Base(caseDir), func(t *testing.T) {
			RunCase(t, caseDir, newParser)
		})
	}
}

// RunCase runs one case directory.
func RunCase[P Parser](t *testing.T, caseDir string, newParser func(cfg parse.Config) P) {
	t.Helper()
	input, err := os.ReadFile(filepath.Join(caseDir, "input.jsonl"))
	require.NoError(t, err)
	cfg := parse.Config{Path: "input.jsonl", Host: "testhost", Text: true}

	whole := Parse(t, input, cfg, newParser, wholeReader)
	wantEntries := filepath.Join(caseDir, "want.jsonl")
	wantErrors := filepath.Join(caseDir, "want.err")
	if *update {
		require.NoError(t, os.WriteFile(wantEntries, whole.Entries, 0o644))
		if len(whole.Errors) > 0 {
			require.NoError(t, os.WriteFile(wantErrors, whole.Errors, 0o644))
		} else if err := os.Remove(wantErrors); err != nil && !errors.Is(err, os.ErrNotExist) {
			require.NoError(t, err)
		}
	}
	want, err := os.ReadFile(wantEntries)
	require.NoError(t, err, "missing golden file; run with -update")
	require.Equal(t, string(want), string(whole.Entries), "entries of %s", caseDir)
	wantErr, err := os.ReadFile(wantErrors)
	if errors.Is(err, os.ErrNotExist) {
		wantErr, err = nil, nil
	}
	require.NoError(t, err)
	require.Equal(t, string(wantErr), string(whole.Errors), "errors of %s", caseDir)

	// The same result however the bytes arrive.
	bytewise := Parse(t, input, cfg, newParser, func(b []byte) io.Reader { return &oneByteReader{b: b} })
	require.Equal(t, string(whole.Entries), string(bytewise.Entries), "byte-at-a-time entries")
	require.Equal(t, string(whole.Errors), string(bytewise.Errors), "byte-at-a-time errors")
	split := Parse(t, input, cfg, newParser, func(b []byte) io.Reader { return &midLineReader{b: b} })
	require.Equal(t, string(whole.Entries), string(split.Entries), "split mid-line entries")
	require.Equal(t, string(whole.Errors), string(split.Errors), "split mid-line errors")
}

// Parse reads input through a jsonl.Reader fed by mkReader and a fresh
// parser, and returns the canonical output. A trailing partial line is
// held back, as a follower would.
func Parse[P Parser](tb testing.TB, input []byte, cfg parse.Config, newParser func(cfg parse.Config) P, mkReader func([]byte) io.Reader) Result {
	tb.Helper()
	p := newParser(cfg)
	rd := jsonl.NewReader(mkReader(input), jsonl.ReaderConfig{BufferSize: 16})
	var res Result
	var entries []schema.Entry
	var out, errs bytes.Buffer
	for {
		line, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			errs.WriteString(err.Error())
			errs.WriteByte('\n')
			continue
		}
		entries, err = p.Parse(entries[:0], line)
		for i := range entries {
			out.Write(entries[i].AppendJSON(nil))
			out.WriteByte('\n')
		}
		if err != nil {
			var de *schema.DecodeError
			require.ErrorAs(tb, err, &de, "parser errors must be *schema.DecodeError")
			errs.WriteString(err.Error())
			errs.WriteByte('\n')
		}
	}
	res.Entries = out.Bytes()
	res.Errors = errs.Bytes()
	return res
}

func wholeReader(b []byte) io.Reader { return bytes.NewReader(b) }

type oneByteReader struct{ b []byte }

func (r *oneByteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = r.b[0]
	r.b = r.b[1:]
	return 1, nil
}

// midLineReader returns data in chunks that end in the middle of lines.
type midLineReader struct{ b []byte }

func (r *midLineReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := len(r.b)
	if i := bytes.IndexByte(r.b, '\n'); i >= 0 {
		n = i/2 + 1
		if n > len(r.b) {
			n = len(r.b)
		}
	}
	n = copy(p, r.b[:n])
	r.b = r.b[n:]
	return n, nil
}

// DocumentParser parses one version of a whole-file document (package
// formats' document formats) into entries and located errors.
type DocumentParser func(cfg parse.Config, data []byte) ([]schema.Entry, []error)

// RunDocuments runs every case directory under dir whose input is a
// whole-file document, testdata/<case>/input.json, against want.jsonl
// and want.err as [Run] does. A document is parsed whole; it is parsed
// twice to check that the result does not depend on anything but the
// bytes.
func RunDocuments(t *testing.T, dir string, parseDoc DocumentParser) {
	t.Helper()
	cases, err := filepath.Glob(filepath.Join(dir, "*", "input.json"))
	require.NoError(t, err)
	require.NotEmpty(t, cases, "no document cases under %s", dir)
	for _, in := range cases {
		caseDir := filepath.Dir(in)
		t.Run(filepath.Base(caseDir), func(t *testing.T) {
			input, err := os.ReadFile(in)
			require.NoError(t, err)
			cfg := parse.Config{Path: "input.json", Host: "testhost", Text: true}
			run := func() Result {
				entries, errs := parseDoc(cfg, input)
				var out, eb bytes.Buffer
				for i := range entries {
					out.Write(entries[i].AppendJSON(nil))
					out.WriteByte('\n')
				}
				for _, err := range errs {
					var de *schema.DecodeError
					require.ErrorAs(t, err, &de, "parser errors must be *schema.DecodeError")
					eb.WriteString(err.Error())
					eb.WriteByte('\n')
				}
				return Result{Entries: out.Bytes(), Errors: eb.Bytes()}
			}
			got := run()
			wantEntries := filepath.Join(caseDir, "want.jsonl")
			wantErrors := filepath.Join(caseDir, "want.err")
			if *update {
				require.NoError(t, os.WriteFile(wantEntries, got.Entries, 0o644))
				if len(got.Errors) > 0 {
					require.NoError(t, os.WriteFile(wantErrors, got.Errors, 0o644))
				} else if err := os.Remove(wantErrors); err != nil && !errors.Is(err, os.ErrNotExist) {
					require.NoError(t, err)
				}
			}
			want, err := os.ReadFile(wantEntries)
			require.NoError(t, err, "missing golden file; run with -update")
			require.Equal(t, string(want), string(got.Entries), "entries of %s", caseDir)
			wantErr, err := os.ReadFile(wantErrors)
			if errors.Is(err, os.ErrNotExist) {
				wantErr, err = nil, nil
			}
			require.NoError(t, err)
			require.Equal(t, string(wantErr), string(got.Errors), "errors of %s", caseDir)
			again := run()
			require.Equal(t, string(got.Entries), string(again.Entries), "a second parse")
		})
	}
}
