package corpusgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTreeConfig_Validate(t *testing.T) {
	tests := []struct {
		name  string
		cfg   TreeConfig
		field string
	}{
		{"Valid", TreeConfig{Dir: "x", Bytes: 1}, ""},
		{"OneKIsNotATree", TreeConfig{Dir: "x", Bytes: 1, Format: Mix1K}, "format"},
		{"NoDir", TreeConfig{Bytes: 1}, "out"},
		{"NoBytes", TreeConfig{Dir: "x"}, "size"},
		{"MaxBelowMin", TreeConfig{Dir: "x", Bytes: 1, MinSessionBytes: 10, MaxSessionBytes: 5}, "max_session_bytes"},
		{"RateAboveOne", TreeConfig{Dir: "x", Bytes: 1, ResumeRate: 2}, "resume_rate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireInvalidField(t, tt.cfg.Validate(), tt.field)
		})
	}
}

// treeFile is one file of a generated tree, read back.
type treeFile struct {
	rel   string
	lines [][]byte
	size  int64
}

func mustWriteTree(tb testing.TB, cfg TreeConfig) (TreeStats, []treeFile) {
	tb.Helper()
	st, err := WriteTree(tb.Context(), cfg)
	require.NoError(tb, err)
	var files []treeFile
	require.NoError(tb, filepath.WalkDir(cfg.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(cfg.Dir, p)
		require.True(tb, bytes.HasSuffix(data, []byte("\n")), "%s ends mid-line", rel)
		files = append(files, treeFile{rel: filepath.ToSlash(rel), lines: Split(data[:len(data)-1]), size: int64(len(data))})
		return nil
	}))
	return st, files
}

var (
	claudeMain = regexp.MustCompile(`^claude/projects/-[^/]+/([0-9a-f-]{36})\.jsonl$`)
	claudeSub  = regexp.MustCompile(`^claude/projects/-[^/]+/([0-9a-f-]{36})/subagents/agent-[0-9a-f]{7}\.jsonl$`)
	piFile     = regexp.MustCompile(`^pi/sessions/--[^/]+--/\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_([0-9a-f-]{36})\.jsonl$`)
	codexFile  = regexp.MustCompile(`^codex/sessions/(\d{4})/(\d\d)/(\d\d)/rollout-(\d{4})-(\d\d)-(\d\d)T\d\d-\d\d-\d\d-([0-9a-f-]{36})\.jsonl$`)
)

func TestWriteTree_Layouts(t *testing.T) {
	cfg := TreeConfig{Dir: t.TempDir(), Bytes: 6 << 20, Seed: 4, MaxSessionBytes: 600 << 10, ResumeRate: 0.3}
	st, files := mustWriteTree(t, cfg)
	var total int64
	var lines int64
	subagents := 0
	for _, f := range files {
		total += f.size
		lines += int64(len(f.lines))
		for i, l := range f.lines {
			require.True(t, json.Valid(l), "%s:%d", f.rel, i+1)
			requireWellFormed(t, l, "%s:%d", f.rel, i+1)
		}
		switch {
		case claudeMain.MatchString(f.rel):
			id := claudeMain.FindStringSubmatch(f.rel)[1]
			for i, l := range f.lines {
				var c claudeLine
				require.NoError(t, json.Unmarshal(l, &c))
				if c.SessionID != "" {
					require.Equal(t, id, c.SessionID, "%s:%d: sessionId is the file's", f.rel, i+1)
				}
				require.False(t, c.Sidechain, "%s:%d", f.rel, i+1)
			}
		case claudeSub.MatchString(f.rel):
			subagents++
			id := claudeSub.FindStringSubmatch(f.rel)[1]
			for i, l := range f.lines {
				var c claudeLine
				require.NoError(t, json.Unmarshal(l, &c))
				require.Equal(t, id, c.SessionID, "%s:%d: subagent lines carry the parent session", f.rel, i+1)
				require.True(t, c.Sidechain, "%s:%d", f.rel, i+1)
			}
		case piFile.MatchString(f.rel):
			var h struct{ Type, ID string }
			require.NoError(t, json.Unmarshal(f.lines[0], &h))
			assert.Equal(t, "session", h.Type, f.rel)
			assert.Equal(t, piFile.FindStringSubmatch(f.rel)[1], h.ID, "%s: header id is in the name", f.rel)
		case codexFile.MatchString(f.rel):
			m := codexFile.FindStringSubmatch(f.rel)
			assert.Equal(t, m[1:4], m[4:7], "%s: directory date is the file's", f.rel)
			var meta struct {
				Type    string
				Payload struct{ ID string }
			}
			require.NoError(t, json.Unmarshal(f.lines[0], &meta))
			assert.Equal(t, "session_meta", meta.Type, f.rel)
			assert.Equal(t, m[7], meta.Payload.ID, "%s: thread id is in the name", f.rel)
			checkCodexTotals(t, f)
		default:
			t.Errorf("unexpected file %s", f.rel)
		}
	}
	assert.Equal(t, st.Bytes, total)
	assert.Equal(t, st.Lines, lines)
	assert.Equal(t, st.Files, len(files))
	assert.InDelta(t, cfg.Bytes, total, float64(cfg.Bytes)*0.05)
	assert.Positive(t, subagents, "subagent files")
	assert.Positive(t, st.Resumed, "resumed copies")
}

// checkCodexTotals checks that the cumulative token totals of a rollout
// never decrease, across any replayed parent history too.
func checkCodexTotals(t *testing.T, f treeFile) {
	t.Helper()
	prev := -1
	metas := 0
	for i, l := range f.lines {
		var c struct {
			Type    string
			Payload struct {
				Type string
				Info *struct {
					Total struct {
						Total int `json:"total_tokens"`
					} `json:"total_token_usage"`
				}
			}
		}
		require.NoError(t, json.Unmarshal(l, &c))
		if c.Type == "session_meta" {
			metas++
			prev = -1 // a fork's replayed parent starts its own count
		}
		if c.Payload.Type == "token_count" && c.Payload.Info != nil {
			require.GreaterOrEqual(t, c.Payload.Info.Total.Total, prev, "%s:%d", f.rel, i+1)
			prev = c.Payload.Info.Total.Total
		}
	}
	assert.LessOrEqual(t, metas, 2, f.rel)
}

func TestWriteTree_Resumed(t *testing.T) {
	for _, format := range []Mix{MixClaude, MixPi, MixCodex} {
		t.Run(string(format), func(t *testing.T) {
			cfg := TreeConfig{Dir: t.TempDir(), Format: format, Bytes: 3 << 20, Seed: 9,
				MaxSessionBytes: 300 << 10, ResumeRate: 0.4}
			st, files := mustWriteTree(t, cfg)
			require.Positive(t, st.Resumed)
			// A replayed line is byte-identical to its original except
			// for the session id (Claude) and lies in another file.
			key := func(l []byte) string {
				var v map[string]any
				require.NoError(t, json.Unmarshal(l, &v))
				delete(v, "sessionId")
				if p, ok := v["payload"].(map[string]any); ok && v["type"] == "session_meta" {
					return "meta:" + p["id"].(string)
				}
				for _, k := range []string{"uuid", "id"} {
					if s, ok := v[k].(string); ok && v["type"] != "session" {
						return k + ":" + s
					}
				}
				return ""
			}
			where := map[string]string{}
			shared := 0
			for _, f := range files {
				if strings.Contains(f.rel, "/subagents/") {
					continue
				}
				for _, l := range f.lines {
					k := key(l)
					if k == "" {
						continue
					}
					if other, ok := where[k]; ok && other != f.rel {
						shared++
					}
					where[k] = f.rel
				}
			}
			assert.Positive(t, shared, "ids shared between an original and its copy")
		})
	}
}

func TestWriteTree_Deterministic(t *testing.T) {
	cfg := TreeConfig{Bytes: 2 << 20, Seed: 2, MaxSessionBytes: 256 << 10, ResumeRate: 0.2}
	cfg.Dir = t.TempDir()
	dirA := cfg.Dir
	_, a := mustWriteTree(t, cfg)
	cfg.Dir = t.TempDir()
	_, b := mustWriteTree(t, cfg)
	require.Equal(t, len(a), len(b))
	for i := range a {
		require.Equal(t, a[i].rel, b[i].rel)
		require.Equal(t, len(a[i].lines), len(b[i].lines), a[i].rel)
		for j := range a[i].lines {
			// pi forks name their parent by absolute path, which differs.
			la := bytes.ReplaceAll(a[i].lines[j], []byte(dirA), []byte("DIR"))
			lb := bytes.ReplaceAll(b[i].lines[j], []byte(cfg.Dir), []byte("DIR"))
			require.True(t, bytes.Equal(la, lb), "%s:%d differs", a[i].rel, j+1)
		}
	}
}

func TestWriteTree_Canceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := WriteTree(ctx, TreeConfig{Dir: t.TempDir(), Bytes: 1 << 20})
	require.ErrorIs(t, err, context.Canceled)
}

func TestWriteTree_ImageLines(t *testing.T) {
	cfg := TreeConfig{Dir: t.TempDir(), Format: MixClaude, Bytes: 40 << 20, Seed: 1,
		MinSessionBytes: 6 << 20, MaxSessionBytes: 12 << 20, ResumeRate: -1}
	st, err := WriteTree(t.Context(), cfg)
	require.NoError(t, err)
	assert.Zero(t, st.Resumed)
	images := 0
	require.NoError(t, filepath.WalkDir(cfg.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		r := bufio.NewReaderSize(f, 1<<20)
		for {
			l, err := r.ReadBytes('\n')
			if len(l) > 1<<20 {
				images++
				require.True(t, json.Valid(l), p)
			}
			if err != nil {
				return nil
			}
		}
	}))
	assert.Positive(t, images)
}
