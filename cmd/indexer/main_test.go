package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
	"github.com/sessionpipe/sessionpipe/schema"
)

// freeAddr returns a loopback address with a free port.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// readCorpus reads every transcript under dirs (session stores and files
// of no known format left out) with host "h", and text when text is set,
// and calls fn with each entry.
func readCorpus(t *testing.T, text bool, fn func(e *schema.Entry), dirs ...string) {
	t.Helper()
	found, err := formats.Walk(dirs, func(err error) { t.Fatal(err) })
	require.NoError(t, err)
	for _, f := range found {
		if f.Meta {
			continue
		}
		_, err := formats.ReadFile(t.Context(), f.Path, formats.ReadConfig{Config: parse.Config{Host: "h", Text: text}}, fn, func(error) {})
		if err != nil && !errors.Is(err, formats.ErrUnknownFormat) {
			require.NoError(t, err)
		}
	}
}

// newStream starts a JetStream server with the entries stream and returns
// it with a publisher to the stream.
func newStream(t *testing.T) (*natstest.Server, *bus.Publisher) {
	t.Helper()
	srv := natstest.RunServer(t)
	js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	_, err := bus.EnsureStream(t.Context(), js, bus.StreamConfig{})
	require.NoError(t, err)
	p, err := bus.NewPublisher(js, bus.PublisherConfig{})
	require.NoError(t, err)
	return srv, p
}

// startServe runs `indexer serve args…` against the NATS server at url
// until the test ends, and then requires it to have returned no error.
func startServe(t *testing.T, url string, stderr *bytes.Buffer, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var serveErr error
	wg.Go(func() {
		serveErr = run(ctx, append([]string{"serve"}, args...), env(map[string]string{"NATS_URL": url}), &bytes.Buffer{}, stderr)
	})
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		require.NoError(t, serveErr, stderr.String())
	})
}

// sessionsLike runs `indexer sessions -json -limit 1000 args…` against the
// API at api and returns the sessions, or an error while they are not as
// many as want's, with as many tokens in all.
func sessionsLike(ctx context.Context, api string, want []index.Session, args ...string) ([]index.Session, error) {
	var out bytes.Buffer
	args = append([]string{"sessions", "-api", api, "-json", "-limit", "1000"}, args...)
	if err := run(ctx, args, env(nil), &out, &bytes.Buffer{}); err != nil {
		return nil, err
	}
	var page struct{ Sessions []index.Session }
	if err := json.Unmarshal(out.Bytes(), &page); err != nil {
		return nil, err
	}
	got := page.Sessions
	if len(got) != len(want) {
		return nil, fmt.Errorf("%d sessions of %d", len(got), len(want))
	}
	var totalWant, totalGot int64
	for i := range want {
		totalWant += want[i].TotalTokens
		totalGot += got[i].TotalTokens
	}
	if totalWant != totalGot {
		return nil, fmt.Errorf("%d tokens of %d", totalGot, totalWant)
	}
	return got, nil
}

// TestIndexer_ServeAndQuery runs `indexer serve` against a JetStream
// server holding the samples' entries and queries it with the
// subcommands: the sessions are the offline ones, usage adds up, alerts
// fire.
func TestIndexer_ServeAndQuery(t *testing.T) {
	srv, p := newStream(t)
	mem := index.NewAggregator(nil)
	readCorpus(t, true, func(e *schema.Entry) {
		mem.Add(e)
		require.NoError(t, p.Publish(t.Context(), bus.EntryMsg(bus.DefaultPrefix, e, nil), nil))
	}, "../../testdata/corpus")
	require.NoError(t, p.Close(t.Context()))
	want := mem.Sessions()

	rules := t.TempDir() + "/rules.yaml"
	require.NoError(t, writeFile(rules, "rules:\n  - name: big-session\n    scope: session\n    metric: total_tokens\n    above: 10000\n"))
	addr := freeAddr(t)
	startServe(t, srv.URL(), &bytes.Buffer{}, "-http", addr, "-rules", rules, "-data-dir", t.TempDir(), "-alert-max-lag", "0")

	api := "http://" + addr
	var got []index.Session
	natstest.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() (err error) {
		got, err = sessionsLike(t.Context(), api, want)
		return err
	})
	require.Len(t, got, len(want))

	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"usage", "-api", api, "-by", "model"}, env(nil), &out, &bytes.Buffer{}))
	require.Contains(t, out.String(), "MODEL")
	require.Contains(t, out.String(), "TOTAL")

	out.Reset()
	natstest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		out.Reset()
		if err := run(t.Context(), []string{"alerts", "-api", api}, env(nil), &out, &bytes.Buffer{}); err != nil {
			return err
		}
		if !strings.Contains(out.String(), "big-session") {
			return errors.New("no alert yet")
		}
		return nil
	})

	out.Reset()
	require.NoError(t, run(t.Context(), []string{"session", "-api", api, want[0].SessionID}, env(nil), &out, &bytes.Buffer{}))
	require.Contains(t, out.String(), "TOTAL (1)")

	err := run(t.Context(), []string{"session", "-api", api, "no-such-session"}, env(nil), &out, &bytes.Buffer{})
	require.ErrorContains(t, err, "404")
	require.ErrorContains(t, err, "not found")

	// ccusage's fixtures name a Claude Code and a Codex session
	// session-alpha: the bare id is ambiguous, the format names one.
	err = run(t.Context(), []string{"session", "-api", api, "session-alpha"}, env(nil), &out, &bytes.Buffer{})
	require.ErrorContains(t, err, "409")
	require.ErrorContains(t, err, "format=claude-code host=h; format=codex host=h")
	require.ErrorContains(t, err, "name one with -format and -host")
	for _, args := range [][]string{{"-format", "codex"}, {"-format", "claude-code", "-host", "h"}} {
		out.Reset()
		require.NoError(t, run(t.Context(), append(append([]string{"session", "-api", api}, args...), "session-alpha"), env(nil), &out, &bytes.Buffer{}), "%v", args)
		require.Contains(t, out.String(), "TOTAL (1)")
		require.Contains(t, out.String(), " "+args[1]+" ")
	}
}

// The API is not opened to the network without a token.
func TestIndexer_ServeRefusesAnOpenAPI(t *testing.T) {
	srv := natstest.RunServer(t)
	err := run(t.Context(), []string{"serve", "-http", "0.0.0.0:0", "-data-dir", t.TempDir()}, env(map[string]string{"NATS_URL": srv.URL()}), &bytes.Buffer{}, &bytes.Buffer{})
	require.ErrorContains(t, err, "not a loopback address: set -token")
}

// An invalid rules file is refused at start with its file:line.
func TestIndexer_ServeRejectsBadRules(t *testing.T) {
	srv := natstest.RunServer(t)
	rules := t.TempDir() + "/rules.yaml"
	require.NoError(t, writeFile(rules, "rules:\n  - name: x\n    scope: galaxy\n    metric: total_tokens\n    above: 1\n"))
	err := run(t.Context(), []string{"serve", "-http", "", "-rules", rules, "-data-dir", t.TempDir()}, env(map[string]string{"NATS_URL": srv.URL()}), &bytes.Buffer{}, &bytes.Buffer{})
	require.ErrorContains(t, err, rules+":3")
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }

// SIGHUP reloads the rules: a lowered threshold fires for the sessions
// already over it, and the webhook, failing at first, gets each event.
func TestIndexer_ReloadAndWebhook(t *testing.T) {
	srv, p := newStream(t)
	readCorpus(t, false, func(e *schema.Entry) {
		require.NoError(t, p.Publish(t.Context(), bus.EntryMsg(bus.DefaultPrefix, e, nil), nil))
	}, "../../testdata/corpus/claude-code")
	require.NoError(t, p.Close(t.Context()))

	var mu sync.Mutex
	var posts []string
	failures := 2
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if failures > 0 {
			failures--
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		body, _ := io.ReadAll(r.Body)
		require.NotEmpty(t, r.Header.Get("Idempotency-Key"))
		posts = append(posts, string(body))
	}))
	t.Cleanup(hook.Close) // after serve has stopped

	rules := t.TempDir() + "/rules.yaml"
	require.NoError(t, writeFile(rules, "rules:\n  - name: fleet-spend\n    scope: fleet\n    metric: total_tokens\n    above: 1e15\n    window: 87600h\n"))
	addr := freeAddr(t)
	startServe(t, srv.URL(), &bytes.Buffer{}, "-http", addr, "-rules", rules, "-webhook", hook.URL, "-data-dir", t.TempDir(), "-alert-max-lag", "0")
	api := "http://" + addr
	natstest.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		var out bytes.Buffer
		if err := run(t.Context(), []string{"usage", "-api", api, "-by", "host", "-json"}, env(nil), &out, &bytes.Buffer{}); err != nil {
			return err
		}
		if !strings.Contains(out.String(), `"key":"h"`) {
			return errors.New("nothing indexed yet")
		}
		return nil
	})

	require.NoError(t, writeFile(rules, "rules:\n  - name: fleet-spend\n    scope: fleet\n    metric: total_tokens\n    above: 1000\n    window: 87600h\n"))
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	natstest.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(posts) == 0 {
			return errors.New("no webhook post yet")
		}
		return nil
	})
	mu.Lock()
	require.Len(t, posts, 1, "the event once, after two failed attempts")
	require.Contains(t, posts[0], "fleet-spend")
	require.Contains(t, posts[0], `"text"`)
	mu.Unlock()
}

// The rules shown in the README are valid.
func TestReadmeRulesParse(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, block, ok := strings.Cut(string(readme), "```yaml\nrules:")
	require.True(t, ok, "the README shows a rules file")
	block, _, ok = strings.Cut(block, "```")
	require.True(t, ok)
	rules, err := alert.Parse("README.md", []byte("rules:"+block))
	require.NoError(t, err)
	require.Len(t, rules, 3)
}
