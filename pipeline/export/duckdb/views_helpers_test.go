package duckdb_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

// offlineEntries decodes the transcripts paths name as `sessionpipe
// sessions` does (formats.FileReader, no text, no raw, host "test-host"),
// each file's entries in file order. Bad lines are skipped.
func offlineEntries(tb testing.TB, paths ...string) []schema.Entry {
	tb.Helper()
	fr, err := formats.NewFileReader(formats.FileReaderConfig{
		Config:      parse.Config{Host: "test-host"},
		OnLineError: func(error) {},
		OnFileError: func(error) {},
	})
	require.NoError(tb, err)
	var entries []schema.Entry
	require.NoError(tb, fr.Read(context.Background(), paths, func(batch []schema.Entry) {
		for i := range batch {
			entries = append(entries, cloneEntry(&batch[i]))
		}
	}))
	return entries
}

// goSessions aggregates entries with the Go aggregator, priced with t,
// as `sessionpipe sessions` does.
func goSessions(entries []schema.Entry, t *price.Table) []index.Session {
	agg := index.NewAggregator(t)
	for i := range entries {
		agg.Add(&entries[i])
	}
	return agg.Sessions()
}

// exportTo writes entries to a new Writer on dir with the sequences
// first, first+1, ... and closes it.
func exportTo(tb testing.TB, dir string, entries []schema.Entry, first uint64) {
	tb.Helper()
	w, err := parquet.NewWriter(parquet.Config{Dir: dir})
	require.NoError(tb, err)
	ctx := context.Background()
	for i := range entries {
		require.NoError(tb, w.Write(ctx, &entries[i], first+uint64(i)))
	}
	require.NoError(tb, w.Close(ctx))
}

// openViews opens an in-memory DuckDB with the views of script defined.
func openViews(tb testing.TB, script string) *sql.DB {
	tb.Helper()
	db := openDuckDB(tb)
	db.SetMaxOpenConns(1) // temporary views live in one connection
	_, err := db.Exec(script)
	require.NoError(tb, err)
	return db
}

// sessionRow is what the comparison looks at: the sessions view's row,
// or an index.Session in the same shape (strings "" where SQL has NULL,
// times to the microsecond, as Parquet keeps them).
type sessionRow struct {
	Format, SessionID, Host, CWD                string
	FirstTS, LastTS                             time.Time
	Turns, UserMessages, AssistantMessages      int64
	APICalls, ToolCalls, ToolErrors             int64
	Input, Output, CacheRead, CacheWrite, Total int64
	CostUSD                                     float64
	UnpricedCalls                               int64
	Models, UnpricedModels                      []string
	PriceSources                                string // "source calls cost_usd" by source, sorted
	Compactions, Subagents                      int64
	ParentSessionID, Title, Slug                string
}

func (r sessionRow) String() string {
	return fmt.Sprintf("%s/%s/%s", r.Format, r.Host, r.SessionID)
}

// fromIndex puts s in the shape of a sessions row.
func fromIndex(s index.Session) sessionRow {
	r := sessionRow{
		Format: string(s.Format), SessionID: s.SessionID, Host: s.Host, CWD: s.CWD,
		FirstTS: micros(s.FirstTS), LastTS: micros(s.LastTS),
		Turns: s.Turns, UserMessages: s.UserMessages, AssistantMessages: s.AssistantMessages,
		APICalls: s.APICalls, ToolCalls: s.ToolCalls, ToolErrors: s.ToolErrors,
		Input: s.InputTokens, Output: s.OutputTokens, CacheRead: s.CacheReadTokens, CacheWrite: s.CacheWriteTokens,
		Total: s.TotalTokens, CostUSD: s.CostUSD, UnpricedCalls: s.UnpricedCalls,
		Models: s.Models, UnpricedModels: s.UnpricedModels,
		Compactions: s.Compactions, Subagents: s.Subagents,
		ParentSessionID: s.ParentSessionID, Title: s.Title, Slug: s.Slug,
	}
	var srcs []string
	for k, v := range s.PriceSources {
		srcs = append(srcs, fmt.Sprintf("%s %d %v", k, v.Calls, v.CostUSD))
	}
	slices.Sort(srcs)
	r.PriceSources = strings.Join(srcs, "; ")
	if r.Models == nil {
		r.Models = []string{}
	}
	if r.UnpricedModels == nil {
		r.UnpricedModels = []string{}
	}
	return r
}

func micros(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond)
}

// viewSessions reads the sessions view in its order.
func viewSessions(tb testing.TB, db *sql.DB) []sessionRow {
	tb.Helper()
	rows, err := db.Query(`SELECT format, session_id, host, cwd, first_ts, last_ts, turns, user_messages,
		assistant_messages, api_calls, tool_calls, tool_errors, input_tokens, output_tokens, cache_read_tokens,
		cache_write_tokens, total_tokens, cost_usd, unpriced_calls, models, unpriced_models, compactions, subagents,
		parent_session_id, title, slug, price_sources FROM sessions`)
	require.NoError(tb, err)
	defer rows.Close()
	var out []sessionRow
	for rows.Next() {
		var (
			r                              sessionRow
			host, cwd, parent, title, slug sql.NullString
			first, last                    sql.NullTime
			models, unpriced, sources      any
		)
		require.NoError(tb, rows.Scan(&r.Format, &r.SessionID, &host, &cwd, &first, &last, &r.Turns, &r.UserMessages,
			&r.AssistantMessages, &r.APICalls, &r.ToolCalls, &r.ToolErrors, &r.Input, &r.Output, &r.CacheRead,
			&r.CacheWrite, &r.Total, &r.CostUSD, &r.UnpricedCalls, &models, &unpriced, &r.Compactions, &r.Subagents,
			&parent, &title, &slug, &sources))
		var srcs []string
		for _, x := range list(sources) {
			m := x.(map[string]any)
			srcs = append(srcs, fmt.Sprintf("%s %d %v", m["source"], m["calls"], m["cost_usd"]))
		}
		slices.Sort(srcs)
		r.PriceSources = strings.Join(srcs, "; ")
		r.Host, r.CWD, r.ParentSessionID, r.Title, r.Slug = host.String, cwd.String, parent.String, title.String, slug.String
		if first.Valid {
			r.FirstTS = first.Time.UTC()
		}
		if last.Valid {
			r.LastTS = last.Time.UTC()
		}
		r.Models, r.UnpricedModels = strs(models), strs(unpriced)
		out = append(out, r)
	}
	require.NoError(tb, rows.Err())
	return out
}

// strs converts a VARCHAR[] value to a non-nil slice.
func strs(v any) []string {
	out := []string{}
	for _, x := range list(v) {
		out = append(out, x.(string))
	}
	return out
}

// requireSameSessions asserts that the sessions view holds exactly the
// Go aggregator's sessions, in the same order, field by field.
func requireSameSessions(tb testing.TB, want []index.Session, got []sessionRow) {
	tb.Helper()
	wantRows := make([]sessionRow, len(want))
	for i := range want {
		wantRows[i] = fromIndex(want[i])
	}
	ids := func(rows []sessionRow) []string {
		var out []string
		for _, r := range rows {
			out = append(out, r.String())
		}
		return out
	}
	require.Equal(tb, ids(wantRows), ids(got), "sessions listed")
	for i := range wantRows {
		require.Equal(tb, wantRows[i], got[i], "session %s", wantRows[i])
	}
}

// scalar runs q and scans its single value into dst.
func scalar(tb testing.TB, db *sql.DB, q string, dst any) {
	tb.Helper()
	require.NoError(tb, db.QueryRow(q).Scan(dst), q)
}
