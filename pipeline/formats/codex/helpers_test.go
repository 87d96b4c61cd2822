package codex_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/codex"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// mustReadCase returns the input of golden case name.
func mustReadCase(tb testing.TB, name string) []byte {
	tb.Helper()
	return formattest.ReadFile(tb, filepath.Join("testdata", name, "input.jsonl"))
}

// parseAll parses data with a fresh parser and returns every entry and
// every error.
func parseAll(tb testing.TB, cfg parse.Config, data []byte) ([]schema.Entry, []error) {
	tb.Helper()
	return formattest.ParseAll(tb, codex.New(cfg), data)
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
