package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/corpusgen"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1GB", 1 << 30, true},
		{"64MB", 64 << 20, true},
		{"64mib", 64 << 20, true},
		{"512K", 512 << 10, true},
		{"1.5 MB", 3 << 19, true},
		{"1000", 1000, true},
		{"10B", 10, true},
		{"", 0, false},
		{"-1MB", 0, false},
		{"lots", 0, false},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if !tt.ok {
			assert.Error(t, err, "parseSize(%q)", tt.in)
			continue
		}
		require.NoError(t, err, "parseSize(%q)", tt.in)
		assert.Equal(t, tt.want, got, "parseSize(%q)", tt.in)
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	var stderr bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"-format", "codex", "-size", "200KB", "-out", dir, "-seed", "3"}, &stderr))
	assert.Contains(t, stderr.String(), "gencorpus: done:")
	files, err := filepath.Glob(filepath.Join(dir, "codex", "sessions", "*", "*", "*", "rollout-*.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var total int64
	for _, f := range files {
		st, err := os.Stat(f)
		require.NoError(t, err)
		total += st.Size()
	}
	assert.InDelta(t, 200<<10, total, 10<<10)
}

func TestRun_Errors(t *testing.T) {
	var stderr bytes.Buffer
	err := run(t.Context(), []string{"-format", "fluux", "-size", "1MB", "-out", t.TempDir()}, &stderr)
	var ce *corpusgen.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "format", ce.Field)

	err = run(t.Context(), []string{"-size", "1MB"}, &stderr)
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "out", ce.Field)

	err = run(t.Context(), []string{"-size", "big", "-out", t.TempDir()}, &stderr)
	require.Error(t, err)

	err = run(t.Context(), []string{"-h"}, &stderr)
	assert.True(t, errors.Is(err, flag.ErrHelp))
}
