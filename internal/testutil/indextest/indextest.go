// Package indextest holds what the tests of pipeline/index and
// pipeline/index/api share: a stream and an indexer on an in-process
// server, published entries, a state built from the samples, HTTP helpers.
package indextest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/store"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
	"github.com/stretchr/testify/require"
)

// NewStream starts a JetStream server with the entries stream configured
// by sc and returns a JetStream context on it.
func NewStream(tb testing.TB, sc bus.StreamConfig) jetstream.JetStream {
	tb.Helper()
	srv := natstest.RunServer(tb)
	js := natstest.JetStream(tb, natstest.Connect(tb, srv.URL()))
	_, err := bus.EnsureStream(tb.Context(), js, sc)
	require.NoError(tb, err)
	return js
}

// Publish publishes entries to the stream through a publisher and waits
// for every acknowledgement; it returns the stream's last sequence.
func Publish(tb testing.TB, js jetstream.JetStream, entries []*schema.Entry) uint64 {
	tb.Helper()
	p, err := bus.NewPublisher(js, bus.PublisherConfig{})
	require.NoError(tb, err)
	for _, e := range entries {
		require.NoError(tb, p.Publish(tb.Context(), bus.EntryMsg(bus.DefaultPrefix, e, nil), nil))
	}
	return closeAndLast(tb, js, p)
}

// closeAndLast waits for p's acknowledgements and returns the stream's
// last sequence.
func closeAndLast(tb testing.TB, js jetstream.JetStream, p *bus.Publisher) uint64 {
	tb.Helper()
	require.NoError(tb, p.Close(tb.Context()))
	s, err := js.Stream(tb.Context(), bus.DefaultStream)
	require.NoError(tb, err)
	info, err := s.Info(tb.Context())
	require.NoError(tb, err)
	return info.State.LastSeq
}

// PublishBatches publishes entries as the tailer does, in batch messages
// of up to perBatch entries (without original lines), one file per
// batch, and returns the stream's last sequence.
func PublishBatches(tb testing.TB, js jetstream.JetStream, entries []*schema.Entry, perBatch int) uint64 {
	tb.Helper()
	p, err := bus.NewPublisher(js, bus.PublisherConfig{})
	require.NoError(tb, err)
	var jsonl []byte
	for i := 0; i < len(entries); i += perBatch {
		batch := entries[i:min(i+perBatch, len(entries))]
		jsonl = jsonl[:0]
		for _, e := range batch {
			jsonl = append(e.AppendJSON(jsonl), '\n')
		}
		e := batch[0]
		span := bus.BatchSpan{Host: e.Host, Format: string(e.Format), File: fmt.Sprintf("1:%d", i),
			End: int64(len(jsonl)), Line: 1, Lines: int64(len(batch))}
		m, err := bus.BatchMsg(bus.DefaultPrefix, span, jsonl, len(batch))
		require.NoError(tb, err)
		require.NoError(tb, p.Publish(tb.Context(), m, nil))
	}
	return closeAndLast(tb, js, p)
}

// RunIndexer runs an indexer until the returned stop is called; stop
// returns Run's error.
func RunIndexer(t *testing.T, cfg index.IndexerConfig) (*index.Indexer, func() error) {
	t.Helper()
	ix, err := index.NewIndexer(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var runErr error
	wg.Go(func() { runErr = ix.Run(ctx) })
	stopped := false
	stop := func() error {
		if !stopped {
			stopped = true
			cancel()
			wg.Wait()
		}
		return runErr
	}
	t.Cleanup(func() { stop() })
	select {
	case <-ix.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("indexer not ready")
	}
	return ix, stop
}

// WaitApplied waits until the indexer applied the stream up to seq.
func WaitApplied(t *testing.T, ix *index.Indexer, seq uint64) {
	t.Helper()
	natstest.CheckFor(t, 60*time.Second, 20*time.Millisecond, func() error {
		if s := ix.Stats(); s.Applied < seq {
			return fmt.Errorf("applied %d of %d", s.Applied, seq)
		}
		return nil
	})
}

// BuildState writes a state of n Claude Code sessions into dir, as an
// indexer leaves it: each session a user message and an API call, spread
// over the 90 days before end, on 20 hosts, 300 projects, 6 models and
// 5 teams (label team).
func BuildState(tb testing.TB, dir string, n int, end time.Time) {
	tb.Helper()
	st, err := store.Open(store.Config{Dir: dir})
	require.NoError(tb, err)
	a, err := index.New(index.Config{Pricer: price.Default(), Store: st, Turns: true})
	require.NoError(tb, err)
	models := []string{"claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805", "claude-haiku-4-5-20251001", "gpt-5-codex", "gpt-5", "gemini-2.5-pro"}
	step := 90 * 24 * time.Hour / time.Duration(n)
	for i := range n {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		ts := end.Add(-step * time.Duration(n-i))
		labels := map[string]string{"team": fmt.Sprint("team-", i%5)}
		base := schema.Entry{Format: schema.FormatClaudeCode, Host: fmt.Sprint("host-", i%20), Path: "/p/" + id + ".jsonl",
			SessionID: id, CWD: fmt.Sprintf("/work/project-%d", i%300), Labels: labels}
		u := base
		u.Line, u.EntryID, u.TS, u.Kind, u.Role, u.Text = 1, id+"-u", ts, schema.KindMessage, schema.RoleUser, "question"
		m := base
		m.Line, m.EntryID, m.TS, m.Kind, m.Role = 2, id+"-a", ts.Add(30*time.Second), schema.KindMessage, schema.RoleAssistant
		m.Model, m.MessageID = models[i%len(models)], "msg-"+id
		m.UsageKey = "claude:msg-" + id + ":req"
		m.Usage = &schema.Usage{Input: int64(1000 + i%5000), Output: int64(200 + i%700), CacheRead: int64(i % 20000)}
		a.Add(&u)
		a.Add(&m)
		if i%20000 == 19999 {
			require.NoError(tb, a.Commit(nil, index.DefaultMaxFacts))
		}
	}
	require.NoError(tb, a.Commit(nil, index.DefaultMaxFacts))
	require.NoError(tb, st.Close())
}

// ReadFiles decodes every transcript under roots into one entry list per
// file, in file order.
func ReadFiles(tb testing.TB, roots ...string) [][]schema.Entry {
	tb.Helper()
	found, err := formats.Walk(roots, func(err error) { tb.Fatal(err) })
	require.NoError(tb, err)
	var out [][]schema.Entry
	for _, f := range found {
		if f.Meta {
			continue
		}
		var es []schema.Entry
		_, err := formats.ReadFile(context.Background(), f.Path, formats.ReadConfig{Config: parse.Config{Host: "h", Text: true}},
			func(e *schema.Entry) { es = append(es, *e) }, func(error) {})
		if err != nil {
			continue // not a transcript
		}
		out = append(out, es)
	}
	require.NotEmpty(tb, out)
	return out
}

// MustNew returns a new Aggregator for cfg.
func MustNew(tb testing.TB, cfg index.Config) *index.Aggregator {
	tb.Helper()
	a, err := index.New(cfg)
	require.NoError(tb, err)
	return a
}

// Interleave returns the entries of files as one stream, as a tailer
// following them all publishes them: files interleaved at random, each
// file in order.
func Interleave(files [][]schema.Entry, rng *rand.Rand) []*schema.Entry {
	var out []*schema.Entry
	pos := make([]int, len(files))
	live := rng.Perm(len(files))
	for len(live) > 0 {
		k := rng.IntN(len(live))
		f := live[k]
		for n := 1 + rng.IntN(8); n > 0 && pos[f] < len(files[f]); n-- {
			out = append(out, &files[f][pos[f]])
			pos[f]++
		}
		if pos[f] == len(files[f]) {
			live = append(live[:k], live[k+1:]...)
		}
	}
	return out
}

// GetJSON GETs path and decodes the JSON answer into v; it returns the
// status.
func GetJSON(t *testing.T, srv *httptest.Server, path, token string, v any) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"), path)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(v), path)
	return resp.StatusCode
}

// Do sends a GET of path to h as a client would, with the Host and
// Authorization given, and returns the status and body.
func Do(t *testing.T, h http.Handler, host, path, authorization string) (int, string) {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, path, nil)
	req.Host = host
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// CallsOfModels returns one session whose API calls use models distinct
// models, each call 10 input and 1 output tokens.
func CallsOfModels(models int) []*schema.Entry {
	entries := make([]*schema.Entry, models)
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for i := range entries {
		id := fmt.Sprintf("msg-%d", i)
		entries[i] = &schema.Entry{
			Format: schema.FormatClaudeCode, Host: "h", Path: "/home/u/.claude/projects/p/s.jsonl", Line: int64(i + 1),
			SessionID: "s", EntryID: fmt.Sprintf("e%d", i), TS: t0.Add(time.Duration(i) * time.Millisecond),
			Kind: schema.KindMessage, Role: schema.RoleAssistant, MessageID: id, Model: fmt.Sprintf("model-%05d", i),
			Usage: &schema.Usage{Input: 10, Output: 1}, UsageKey: "claude:" + id + ":req",
		}
	}
	return entries
}
