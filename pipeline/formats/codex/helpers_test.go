package codex_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/codex"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// mustLines splits data into complete lines, each with its own copy of
// the bytes.
func mustLines(tb testing.TB, data []byte) []jsonl.Line {
	tb.Helper()
	rd := jsonl.NewReader(bytes.NewReader(data), jsonl.ReaderConfig{})
	var lines []jsonl.Line
	for {
		l, err := rd.Next()
		if err == io.EOF {
			return lines
		}
		require.NoError(tb, err)
		l.Bytes = append([]byte(nil), l.Bytes...)
		lines = append(lines, l)
	}
}

// mustReadCase returns the input of golden case name.
func mustReadCase(tb testing.TB, name string) []byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name, "input.jsonl"))
	require.NoError(tb, err)
	return data
}

// parseAll parses data with a fresh parser and returns every entry and
// every error.
func parseAll(tb testing.TB, cfg parse.Config, data []byte) ([]schema.Entry, []error) {
	tb.Helper()
	p := codex.New(cfg)
	var entries []schema.Entry
	var errs []error
	for _, l := range mustLines(tb, data) {
		var err error
		entries, err = p.Parse(entries, l)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return entries, errs
}

// mustParse is parseAll for input that must hold no error.
func mustParse(tb testing.TB, cfg parse.Config, data []byte) []schema.Entry {
	tb.Helper()
	entries, errs := parseAll(tb, cfg, data)
	require.Empty(tb, errs)
	return entries
}

// usages returns the entries that carry usage.
func usages(entries []schema.Entry) []schema.Entry {
	var out []schema.Entry
	for _, e := range entries {
		if e.Usage != nil {
			out = append(out, e)
		}
	}
	return out
}

// sumUsage adds up the usage of entries.
func sumUsage(entries []schema.Entry) schema.Usage {
	var u schema.Usage
	for _, e := range entries {
		if e.Usage != nil {
			u.Add(*e.Usage)
		}
	}
	return u
}
