package redact_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/redact"
)

// corpusDir holds the shipped sample transcripts.
const corpusDir = "../../testdata/corpus"

// corpusLines returns every line of every sample transcript, with its
// location.
func corpusLines(tb testing.TB) (lines [][]byte, where []string) {
	tb.Helper()
	return jsonlLines(tb, corpusDir)
}

// jsonlLines returns the lines of every .jsonl file under dir, each with
// its location (path under dir and line number).
func jsonlLines(tb testing.TB, dir string) (lines [][]byte, where []string) {
	tb.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		for n := 1; sc.Scan(); n++ {
			lines = append(lines, bytes.Clone(sc.Bytes()))
			where = append(where, fmt.Sprintf("%s:%d", strings.TrimPrefix(path, dir+"/"), n))
		}
		return sc.Err()
	})
	require.NoError(tb, err)
	require.NotEmpty(tb, lines)
	return lines, where
}

// TestRedactor_Corpus runs every line of the shipped samples through JSON
// and lists what changed.
func TestRedactor_Corpus(t *testing.T) {
	r := mustNew(t, redact.Config{})
	lines, where := corpusLines(t)
	var changed []string
	for i, line := range lines {
		var st redact.Stats
		out := r.JSON(line, &st)
		if json.Valid(line) {
			require.True(t, json.Valid(out), "%s: redacted line is not valid JSON", where[i])
		}
		if st.Total() == 0 {
			require.Equal(t, string(line), string(out), where[i])
			continue
		}
		for k := range redact.NumKinds {
			if st.Count(k) > 0 {
				changed = append(changed, fmt.Sprintf("%s: %d %s", where[i], st.Count(k), k))
			}
		}
		t.Logf("%s:\n%s", where[i], diffContext(string(line), string(out)))
	}
	t.Logf("%d lines, changed: %q", len(lines), changed)
	// The one secret-shaped text of the samples: a documentation example,
	// "qpdf --password=mypassword --decrypt …", in a pi tool result.
	require.Equal(t, []string{"pi/pi-mono/session.jsonl:100: 1 password"}, changed)
}

// diffContext shows the changed parts of a line, with some context.
func diffContext(a, b string) string {
	var sb strings.Builder
	for len(a) > 0 || len(b) > 0 {
		p := 0
		for p < len(a) && p < len(b) && a[p] == b[p] {
			p++
		}
		if p == len(a) && p == len(b) {
			break
		}
		i := strings.Index(b[p:], "[REDACTED:")
		j := strings.IndexByte(b[p+i:], ']')
		end := p + i + j + 1
		tail := b[end:]
		k := strings.Index(a[p:], tail[:min(len(tail), 8)])
		if i < 0 || k < 0 || len(tail) == 0 {
			fmt.Fprintf(&sb, "  … %q → %q\n", a[max(0, p-40):min(len(a), p+80)], b[max(0, p-40):min(len(b), p+80)])
			break
		}
		fmt.Fprintf(&sb, "  %q → %s\n", a[max(0, p-40):p+k], b[max(0, p-40):end])
		a, b = a[p+k:], tail
	}
	return sb.String()
}

func mustNew(tb testing.TB, cfg redact.Config) *redact.Redactor {
	tb.Helper()
	r, err := redact.New(cfg)
	require.NoError(tb, err)
	return r
}
