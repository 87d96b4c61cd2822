// Package exporttest holds the helpers of the export packages' tests: entries
// (the corpus, generated trees, an entry with every field set), a Writer
// that closes at cleanup, and reading the Parquet back through DuckDB.
package exporttest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	goduckdb "github.com/marcboeker/go-duckdb/v2"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/corpusgen"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
	"github.com/sessionpipe/sessionpipe/pipeline/export/duckdb"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// RepoRoot returns the module root, for testdata/corpus.
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(tb, ok)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// CorpusEntries decodes every transcript of testdata/corpus.
func CorpusEntries(tb testing.TB) []schema.Entry {
	tb.Helper()
	return TreeEntries(tb, filepath.Join(RepoRoot(tb), "testdata", "corpus"))
}

// GeneratedEntries decodes a tree of generated sessions (Claude Code, pi
// and Codex, with resumed copies and base64 images) of about size bytes.
func GeneratedEntries(tb testing.TB, size int64) []schema.Entry {
	tb.Helper()
	dir := tb.TempDir()
	_, err := corpusgen.WriteTree(tb.Context(), corpusgen.TreeConfig{Dir: dir, Format: corpusgen.MixMixed, Bytes: size, Seed: 7})
	require.NoError(tb, err)
	return TreeEntries(tb, dir)
}

// TreeEntries decodes every transcript below root with text and raw JSON
// kept, as host "test-host". Bad lines are skipped (the decoder reports
// them); files that are not transcripts are skipped.
func TreeEntries(tb testing.TB, root string) []schema.Entry {
	tb.Helper()
	found, err := formats.Walk([]string{root}, func(error) {})
	require.NoError(tb, err)
	var entries []schema.Entry
	for _, f := range found {
		if f.Meta {
			continue
		}
		cfg := formats.ReadConfig{Config: parse.Config{Host: "test-host", Text: true, Raw: true}}
		_, err := formats.ReadFile(context.Background(), f.Path, cfg, func(e *schema.Entry) {
			entries = append(entries, CloneEntry(e))
		}, func(error) {})
		if err != nil {
			continue // not a transcript
		}
	}
	require.NotEmpty(tb, entries)
	return entries
}

// CloneEntry deep-copies e (parsers reuse their buffers).
func CloneEntry(e *schema.Entry) schema.Entry {
	b := e.AppendJSON(nil)
	var c schema.Entry
	if err := json.Unmarshal(b, &c); err != nil {
		panic(err)
	}
	c.Raw = append(json.RawMessage(nil), e.Raw...)
	return c
}

// FullEntry is an entry with every field set, optional structs included.
func FullEntry(i int) schema.Entry {
	cost := 0.125 + float64(i)
	return schema.Entry{
		Format: schema.FormatFluux, Host: "full-host", Labels: map[string]string{"team": "infra", "cost_centre": fmt.Sprint(i % 2)}, Path: "/data/memory/x/history.jsonl", Offset: int64(100 * i), Line: int64(i + 1), Object: 1,
		SessionID: fmt.Sprintf("full-session-%d", i%3), EntryID: fmt.Sprintf("e%d", i), ParentID: "p", ParentSessionID: "ps",
		TS:   time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC).Add(time.Duration(i) * time.Second),
		Kind: schema.KindMessage, Role: schema.RoleAssistant, Subtype: "st", Text: "tab\tnul\x00 quote\" é 🙂\nline",
		Meta: true, Copy: true, Truncated: true, Model: "m", Provider: "prov", MessageID: "mid", RequestID: "rid",
		Usage:    &schema.Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 9, CacheWrite5m: 4, CacheWrite1h: 5, Reasoning: 1, Speed: "fast"},
		UsageKey: "uk", CostUSD: &cost, StopReason: "end_turn",
		ToolCalls:   []schema.ToolCall{{ID: "t1", Name: "Bash", Input: json.RawMessage(`{"command":"ls -la"}`)}, {ID: "t2", Name: "Read"}},
		ToolResults: []schema.ToolResult{{ToolCallID: "t1", IsError: true, Content: "boom"}, {ToolCallID: "t2"}},
		Attachments: []schema.Attachment{{Filename: "a.png", MimeType: "image/png", Size: "1.2MB"}},
		Reaction:    &schema.Reaction{MessageID: "m0", Emojis: []string{"👍", "🎉"}},
		Sender:      "bob", CWD: "/home/x", GitBranch: "main", AgentVersion: "1.2.3", Sidechain: true, Background: true, AgentID: "aid", AgentType: "general-purpose",
		Slug: "slug", Command: "/compact", CommandArgs: "now", Title: "title",
		Origin: &schema.Origin{Provider: "telegram", Surface: "dm", ChatType: "direct", From: "x", Label: "lbl"},
		Raw:    json.RawMessage(`{"id":"raw","n":[1,2]}`),
	}
}

// EmptyEntry has nothing but what the contract requires: every optional
// column NULL (usage nil, not zero; no ts).
func EmptyEntry() schema.Entry {
	return schema.Entry{Format: schema.FormatPi, SessionID: "empty", EntryID: "only", Kind: schema.KindEvent}
}

// ZeroUsageEntry has usage with all counters zero: not NULL.
func ZeroUsageEntry() schema.Entry {
	return schema.Entry{Format: schema.FormatPi, Host: "h", SessionID: "zero", EntryID: "z", Kind: schema.KindMessage,
		Role: schema.RoleAssistant, Usage: &schema.Usage{}, TS: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// MustWriter opens a Writer on dir, closed (flushed) at cleanup if the
// test did not.
func MustWriter(tb testing.TB, cfg parquet.Config) *parquet.Writer {
	tb.Helper()
	w, err := parquet.NewWriter(cfg)
	require.NoError(tb, err)
	tb.Cleanup(func() { w.Close(context.Background()) })
	return w
}

// WriteAll writes entries with sequences 1..n and closes w.
func WriteAll(tb testing.TB, w *parquet.Writer, entries []schema.Entry) {
	tb.Helper()
	ctx := tb.Context()
	for i := range entries {
		require.NoError(tb, w.Write(ctx, &entries[i], uint64(i+1)))
	}
	require.NoError(tb, w.Close(ctx))
}

// OpenDuckDB opens an in-memory DuckDB.
func OpenDuckDB(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := sql.Open("duckdb", "")
	require.NoError(tb, err)
	tb.Cleanup(func() { db.Close() })
	return db
}

// Glob returns the read_parquet source over every file below dir.
func Glob(dir string) string {
	return fmt.Sprintf("read_parquet('%s/**/*.parquet', hive_partitioning=true, union_by_name=true)", strings.ReplaceAll(dir, "'", "''"))
}

// ReadBack reads every row below dir through DuckDB, ordered by seq, as
// entries (with seq and the hive date beside them).
func ReadBack(tb testing.TB, db *sql.DB, dir string) []ReadRow {
	tb.Helper()
	q := `SELECT seq, key, format, host, CAST(date AS VARCHAR), path, "offset", line, object, session_id, entry_id, parent_id,
	parent_session_id, ts, kind, role, subtype, text, meta, copy, truncated, model, provider, message_id, request_id,
	usage, usage_key, cost_usd, stop_reason,
	list_transform(tool_calls, x -> struct_pack(id := x.id, name := x.name, input := CAST(x.input AS VARCHAR))),
	tool_results, attachments, reaction, sender, cwd, git_branch, agent_version, sidechain, background, agent_id, agent_type,
	slug, command, command_args, title, origin, CAST(raw AS VARCHAR), labels
	FROM ` + Glob(dir) + ` ORDER BY seq`
	rows, err := db.Query(q)
	require.NoError(tb, err)
	defer rows.Close()
	var out []ReadRow
	for rows.Next() {
		var (
			r                                                              ReadRow
			format, kind                                                   string
			host, date, path, parentID, parentSession, role, subtype, text sql.NullString
			model, provider, messageID, requestID, usageKey, stopReason    sql.NullString
			sender, cwd, gitBranch, agentVersion, agentID, agentType, slug sql.NullString
			command, commandArgs, title, raw                               sql.NullString
			ts                                                             sql.NullTime
			cost                                                           sql.NullFloat64
			usage, toolCalls, toolResults, attachments, reaction, origin   any
			labels                                                         any
			object                                                         int32
		)
		e := &r.Entry
		require.NoError(tb, rows.Scan(&r.Seq, &r.Key, &format, &host, &date, &path, &e.Offset, &e.Line, &object,
			&e.SessionID, &e.EntryID, &parentID, &parentSession, &ts, &kind, &role, &subtype, &text, &e.Meta, &e.Copy,
			&e.Truncated, &model, &provider, &messageID, &requestID, &usage, &usageKey, &cost, &stopReason,
			&toolCalls, &toolResults, &attachments, &reaction, &sender, &cwd, &gitBranch, &agentVersion, &e.Sidechain, &e.Background,
			&agentID, &agentType, &slug, &command, &commandArgs, &title, &origin, &raw, &labels))
		e.Format, e.Kind, e.Object = schema.Format(format), schema.Kind(kind), int(object)
		e.Host, r.Date, e.Path, e.ParentID, e.ParentSessionID = host.String, date.String, path.String, parentID.String, parentSession.String
		e.Role, e.Subtype, e.Text = schema.Role(role.String), subtype.String, text.String
		e.Model, e.Provider, e.MessageID, e.RequestID, e.UsageKey, e.StopReason = model.String, provider.String, messageID.String, requestID.String, usageKey.String, stopReason.String
		e.Sender, e.CWD, e.GitBranch, e.AgentVersion, e.AgentID, e.AgentType, e.Slug = sender.String, cwd.String, gitBranch.String, agentVersion.String, agentID.String, agentType.String, slug.String
		e.Command, e.CommandArgs, e.Title = command.String, commandArgs.String, title.String
		r.HostNull = !host.Valid
		if ts.Valid {
			e.TS = ts.Time.UTC()
		}
		if cost.Valid {
			v := cost.Float64
			e.CostUSD = &v
		}
		if raw.Valid {
			e.Raw = json.RawMessage(raw.String)
		}
		if m, ok := usage.(map[string]any); ok {
			e.Usage = &schema.Usage{Input: I64(m["input"]), Output: I64(m["output"]), CacheRead: I64(m["cache_read"]),
				CacheWrite: I64(m["cache_write"]), CacheWrite5m: I64(m["cache_write_5m"]), CacheWrite1h: I64(m["cache_write_1h"]),
				Reasoning: I64(m["reasoning"]), Speed: Str(m["speed"])}
		}
		for _, x := range List(toolCalls) {
			m := x.(map[string]any)
			tc := schema.ToolCall{ID: Str(m["id"]), Name: Str(m["name"])}
			if s := Str(m["input"]); s != "" {
				tc.Input = json.RawMessage(s)
			}
			e.ToolCalls = append(e.ToolCalls, tc)
		}
		for _, x := range List(toolResults) {
			m := x.(map[string]any)
			e.ToolResults = append(e.ToolResults, schema.ToolResult{ToolCallID: Str(m["tool_call_id"]), IsError: m["is_error"].(bool), Content: Str(m["content"])})
		}
		for _, x := range List(attachments) {
			m := x.(map[string]any)
			e.Attachments = append(e.Attachments, schema.Attachment{Filename: Str(m["filename"]), MimeType: Str(m["mime_type"]), Size: Str(m["size"])})
		}
		if m, ok := reaction.(map[string]any); ok {
			rc := &schema.Reaction{MessageID: Str(m["message_id"]), Emojis: []string{}}
			for _, x := range List(m["emojis"]) {
				rc.Emojis = append(rc.Emojis, x.(string))
			}
			e.Reaction = rc
		}
		if m, ok := origin.(map[string]any); ok {
			e.Origin = &schema.Origin{Provider: Str(m["provider"]), Surface: Str(m["surface"]), ChatType: Str(m["chat_type"]), From: Str(m["from"]), Label: Str(m["label"])}
		}
		e.Labels = LabelsOf(tb, labels)
		out = append(out, r)
	}
	require.NoError(tb, rows.Err())
	return out
}

// LabelsOf converts a MAP(VARCHAR, VARCHAR) read through database/sql
// (NULL is no labels).
func LabelsOf(tb testing.TB, v any) map[string]string {
	if v == nil {
		return nil
	}
	m, ok := v.(goduckdb.Map)
	require.True(tb, ok, "labels: %T", v)
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k.(string)] = v.(string)
	}
	return out
}

// ReadRow is one row read back: the entry, its sequence and key, and the
// hive date partition value.
type ReadRow struct {
	Seq      int64
	Key      string
	Date     string
	HostNull bool
	Entry    schema.Entry
}

func I64(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int32:
		return int64(x)
	case nil:
		return 0
	}
	panic(fmt.Sprintf("not an integer: %T", v))
}

func Str(v any) string {
	s, _ := v.(string)
	return s
}

func List(v any) []any {
	l, _ := v.([]any)
	return l
}

// Want returns e as it must read back: ts to the microsecond, empty
// slices as none, reaction emojis as a non-nil list.
func Want(e schema.Entry) schema.Entry {
	if !e.TS.IsZero() {
		e.TS = e.TS.UTC().Truncate(time.Microsecond)
	}
	if len(e.ToolCalls) == 0 {
		e.ToolCalls = nil
	}
	if len(e.ToolResults) == 0 {
		e.ToolResults = nil
	}
	if len(e.Attachments) == 0 {
		e.Attachments = nil
	}
	if e.Reaction != nil && e.Reaction.Emojis == nil {
		r := *e.Reaction
		r.Emojis = []string{}
		e.Reaction = &r
	}
	if e.CostUSD != nil && math.IsNaN(*e.CostUSD) {
		e.CostUSD = nil
	}
	if len(e.Raw) == 0 {
		e.Raw = nil
	}
	if len(e.Labels) == 0 {
		e.Labels = nil
	}
	return e
}

// DuckDBInit returns the DuckDB script of the views over the Parquet files
// under dir, priced with the embedded price table: [duckdb.DuckDBScript]
// with nothing but the directory set.
func DuckDBInit(dir string) string {
	return duckdb.DuckDBScript(duckdb.ViewConfig{Dir: dir})
}

// MustCompact runs [parquet.Compact] with cfg and requires it to succeed.
func MustCompact(t testing.TB, cfg parquet.CompactConfig) parquet.CompactStats {
	t.Helper()
	st, err := parquet.Compact(t.Context(), cfg)
	require.NoError(t, err)
	return st
}

// Chunk builds a raw chunk of the given lines of a file.
func Chunk(host, path, file string, line int64, lines ...string) *bus.RawChunk {
	data := strings.Join(lines, "")
	return &bus.RawChunk{
		Host: host, Path: path, Format: "pi", File: file, Line: line, Lines: int64(len(lines)),
		Offset: 0, End: int64(len(data)), Sessions: []string{"s-" + file},
		TS: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC), Data: []byte(data),
	}
}

// RestoreAll restores the archive arch with cfg (into a new temporary
// directory when cfg.Out is empty), requires every file inside Out, and
// returns their contents by path relative to Out.
func RestoreAll(t testing.TB, arch string, cfg archive.RestoreConfig) (map[string]string, []archive.Restored) {
	t.Helper()
	cfg.Archive = arch
	if cfg.Out == "" {
		cfg.Out = t.TempDir()
	}
	got, err := archive.Restore(t.Context(), cfg)
	require.NoError(t, err)
	files := map[string]string{}
	for _, r := range got {
		rel, err := filepath.Rel(cfg.Out, r.Out)
		require.NoError(t, err)
		require.False(t, rel == ".." || strings.HasPrefix(rel, "../"), "restored outside -out: %s", r.Out)
		data, err := os.ReadFile(r.Out)
		require.NoError(t, err)
		files[filepath.ToSlash(rel)] = string(data)
	}
	return files, got
}

// CheckDir checks that no temporary file is left below dir and that the
// Parquet files on disk are those the manifest lists, each once; it
// returns the manifest.
func CheckDir(t *testing.T, dir string) *parquet.Manifest {
	t.Helper()
	m, err := parquet.ReadManifest(dir)
	require.NoError(t, err)
	listed := map[string]bool{}
	for _, f := range m.Files {
		require.False(t, listed[f.Path], "listed twice: %s", f.Path)
		listed[f.Path] = true
	}
	tmps, parts := Scan(t, dir)
	require.Empty(t, tmps)
	require.ElementsMatch(t, Keys(listed), parts, "files on disk = files in the manifest")
	return m
}

// Counts returns count(*), count(DISTINCT seq) and count(DISTINCT key)
// of the rows below dir.
func Counts(t *testing.T, dir string) [3]int64 {
	t.Helper()
	var c [3]int64
	require.NoError(t, OpenDuckDB(t).QueryRow(`SELECT count(*), count(DISTINCT seq), count(DISTINCT key) FROM `+Glob(dir)).Scan(&c[0], &c[1], &c[2]))
	return c
}

// ListedOnDisk checks that the Parquet files on disk are exactly those the
// manifest lists, each once ([CheckDir]), and returns the rows and
// distinct sequences a reader globbing the directory sees ([Counts]).
func ListedOnDisk(t *testing.T, dir string) (rows, seqs int64) {
	t.Helper()
	CheckDir(t, dir)
	c := Counts(t, dir)
	return c[0], c[1]
}

// Scan lists the temporary files and the part files below dir (relative,
// with slashes).
func Scan(t *testing.T, dir string) (tmps, parts []string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case strings.HasSuffix(rel, ".tmp"):
			tmps = append(tmps, rel)
		case strings.HasSuffix(rel, ".parquet"):
			parts = append(parts, rel)
		}
		return nil
	}))
	return tmps, parts
}

func Keys(m map[string]bool) []string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	return s
}
