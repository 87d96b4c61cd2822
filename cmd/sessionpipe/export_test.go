package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// copyTree copies the regular files under src to dst and returns their
// paths relative to src.
func copyTree(t *testing.T, src, dst string) []string {
	t.Helper()
	var files []string
	require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		files = append(files, rel)
		return os.WriteFile(target, data, 0o644)
	}))
	return files
}

// Every sample file, exported, deleted and restored from the archive, is
// identical to the original; exporting more into the same directory
// continues it.
func TestExportRestore_EverySampleIdentical(t *testing.T) {
	src := t.TempDir()
	files := copyTree(t, corpus, src)
	var transcripts []string
	for _, f := range files {
		if strings.HasSuffix(f, ".jsonl") {
			transcripts = append(transcripts, f)
		}
	}
	require.NotEmpty(t, transcripts)
	originals := map[string][]byte{}
	for _, f := range transcripts {
		data, err := os.ReadFile(filepath.Join(src, f))
		require.NoError(t, err)
		originals[f] = data
	}

	out := filepath.Join(t.TempDir(), "pq")
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"export", "-out", out, "-host", "laptop", "-content", "full", src}, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	require.Contains(t, stderr.String(), "Parquet files")
	parquets, err := filepath.Glob(filepath.Join(out, "format=*", "date=*", "host=laptop", "*.parquet"))
	require.NoError(t, err)
	require.NotEmpty(t, parquets)

	// The agent deletes its transcripts.
	require.NoError(t, os.RemoveAll(src))

	restored := t.TempDir()
	stdout.Reset()
	stderr.Reset()
	code = run(t.Context(), []string{"restore", "-archive", out + "-archive", "-out", restored}, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	for _, f := range transcripts {
		got, err := os.ReadFile(filepath.Join(restored, "laptop", src, f))
		if !strings.Contains(stdout.String(), f) {
			continue // not a transcript of a known format: not archived
		}
		require.NoError(t, err, f)
		require.True(t, bytes.Equal(originals[f], got), "%s restored differs (%d bytes, want %d)", f, len(got), len(originals[f]))
	}
	require.GreaterOrEqual(t, strings.Count(stdout.String(), "\n"), len(transcripts)-2, "nearly every sample is a transcript:\n%s", stdout.String())

	// Restoring again over the files is refused without -force.
	code = run(t.Context(), []string{"restore", "-archive", out + "-archive", "-out", restored}, &stdout, &stderr)
	require.Equal(t, exitError, code)
	require.Contains(t, stderr.String(), "use -force")

	// More files into the same output continue its sequences: nothing
	// is skipped as already exported.
	more := t.TempDir()
	copyTree(t, filepath.Join(corpus, "pi"), more)
	stderr.Reset()
	code = run(t.Context(), []string{"export", "-out", out, "-host", "laptop2", "-content", "full", more}, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	second, err := filepath.Glob(filepath.Join(out, "format=*", "date=*", "host=laptop2", "*.parquet"))
	require.NoError(t, err)
	require.NotEmpty(t, second)
}

func TestExport_Usage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitUsage, run(t.Context(), []string{"export", corpus}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "-out DIR is required")
	stderr.Reset()
	require.Equal(t, exitUsage, run(t.Context(), []string{"export", "-out", t.TempDir()}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "no PATH")
	stderr.Reset()
	require.Equal(t, exitUsage, run(t.Context(), []string{"restore", "-out", t.TempDir()}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "-archive and -out are required")
	stderr.Reset()
	require.Equal(t, exitUsage, run(t.Context(), []string{"restore", "-archive", "x", "-out", "y", "-since", "yesterday"}, &stdout, &stderr))
	stderr.Reset()
	require.Equal(t, exitError, run(t.Context(), []string{"restore", "-archive", t.TempDir(), "-out", t.TempDir()}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "not an archive")
}

// -archive-level reaches the archive's encoder: the same transcripts at
// 'fastest' take more room than at 'best', and both restore byte for
// byte; a name that is not a level is refused before anything is written.
func TestExport_ArchiveLevel(t *testing.T) {
	src := t.TempDir()
	copyTree(t, filepath.Join(corpus, "claude-code"), src)
	size := func(dir string) int64 {
		var n int64
		require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !strings.HasSuffix(p, ".zst") {
				return err
			}
			fi, err := d.Info()
			n += fi.Size()
			return err
		}))
		return n
	}
	export := func(level, out, host, dir string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), []string{"export", "-q", "-archive-level", level, "-out", out, "-host", host, "-content", "full", dir}, &stdout, &stderr)
		require.Equal(t, exitOK, code, stderr.String())
	}
	// restoreSame restores the archive of out and requires every file of
	// each tree (host → the directory it exported) back byte for byte.
	restoreSame := func(out string, trees map[string]string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		restored := t.TempDir()
		code := run(t.Context(), []string{"restore", "-archive", out + "-archive", "-out", restored}, &stdout, &stderr)
		require.Equal(t, exitOK, code, stderr.String())
		for host, dir := range trees {
			n := 0
			base := filepath.Join(restored, host, dir)
			require.NoError(t, filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() {
					return err
				}
				rel, err := filepath.Rel(base, p)
				require.NoError(t, err)
				want, err := os.ReadFile(filepath.Join(dir, rel))
				require.NoError(t, err)
				got, err := os.ReadFile(p)
				require.NoError(t, err)
				require.True(t, bytes.Equal(want, got), "%s of %s", rel, host)
				n++
				return nil
			}))
			require.Positive(t, n, host)
		}
	}
	archived := map[string]int64{}
	for _, level := range []string{"fastest", "best"} {
		out := filepath.Join(t.TempDir(), "pq")
		export(level, out, "h", src)
		archived[level] = size(out + "-archive")
		require.Positive(t, archived[level], level)
		restoreSame(out, map[string]string{"h": src})
	}
	require.Greater(t, archived["fastest"], archived["best"], "fastest compresses less than best")

	// A level changed between two runs into one archive: segments of
	// both levels, every file restored.
	more := t.TempDir()
	copyTree(t, filepath.Join(corpus, "pi"), more)
	mixed := filepath.Join(t.TempDir(), "pq")
	export("best", mixed, "h", src)
	export("fastest", mixed, "h2", more)
	restoreSame(mixed, map[string]string{"h": src, "h2": more})

	var stdout, stderr bytes.Buffer
	out := filepath.Join(t.TempDir(), "pq")
	code := run(t.Context(), []string{"export", "-archive-level", "7", "-out", out, src}, &stdout, &stderr)
	require.Equal(t, exitError, code, stderr.String()) // as every flag.Parse error
	require.Contains(t, stderr.String(), "not a level")
	require.NoDirExists(t, out)
}
