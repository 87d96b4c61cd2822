package index_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/indextest"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
	"github.com/sessionpipe/sessionpipe/schema"
)

// alertHook is a webhook endpoint that accepts the first ok requests and
// then answers fail ("503", or "hang" until the sender gives up) until
// recover is called. It records the Idempotency-Key of every request and
// how often each key was accepted.
type alertHook struct {
	*httptest.Server

	mu       sync.Mutex
	ok       int    // requests still accepted before failing
	fail     string // "", "503" or "hang"
	attempts []string
	accepted map[string]int
}

func newAlertHook(tb testing.TB, ok int, fail string) *alertHook {
	tb.Helper()
	h := &alertHook{ok: ok, fail: fail, accepted: make(map[string]int)}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // read whole: the server then sees the client go
		key := r.Header.Get("Idempotency-Key")
		h.mu.Lock()
		h.attempts = append(h.attempts, key)
		fail := h.fail
		if h.ok > 0 {
			h.ok--
			fail = ""
		}
		if fail == "" && key != "" {
			h.accepted[key]++
		}
		h.mu.Unlock()
		switch fail {
		case "":
			w.WriteHeader(http.StatusOK)
		case "hang":
			<-r.Context().Done() // until the sender's timeout or stop
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	tb.Cleanup(h.Close)
	return h
}

func (h *alertHook) recover() {
	h.mu.Lock()
	h.fail = ""
	h.mu.Unlock()
}

func (h *alertHook) state() (attempts int, accepted map[string]int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	accepted = make(map[string]int, len(h.accepted))
	for k, v := range h.accepted {
		accepted[k] = v
	}
	return len(h.attempts), accepted
}

// waitAccepted waits until the hook accepted every key of want.
func (h *alertHook) waitAccepted(tb testing.TB, want []string) map[string]int {
	tb.Helper()
	natstest.CheckFor(tb, 60*time.Second, 10*time.Millisecond, func() error {
		_, accepted := h.state()
		for _, k := range want {
			if accepted[k] == 0 {
				return fmt.Errorf("%d of %d alerts accepted; %s not yet", len(accepted), len(want), k)
			}
		}
		return nil
	})
	_, accepted := h.state()
	return accepted
}

// webhookSetup returns the corpus as a stream of entries and a rule that
// fires once per session over 10,000 tokens.
func webhookSetup(t *testing.T) ([]*schema.Entry, []alert.Rule) {
	t.Helper()
	stream := indextest.Interleave(indextest.ReadFiles(t, "../../testdata/corpus"), rand.New(rand.NewPCG(9, 9)))
	rules, err := alert.Parse("rules.yaml", []byte("rules:\n  - name: big-session\n    scope: session\n    metric: total_tokens\n    above: 10000\n"))
	require.NoError(t, err)
	return stream, rules
}

func newTestWebhook(t *testing.T, url string) *alert.Webhook {
	t.Helper()
	w, err := alert.NewWebhook(alert.WebhookConfig{URL: url, Timeout: 100 * time.Millisecond,
		MinBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	require.NoError(t, err)
	return w
}

// alertIDs returns the ids of the alerts the indexer fired, sorted.
func alertIDs(t *testing.T, ix *index.Indexer) []string {
	t.Helper()
	var ids []string
	for _, e := range ix.Alerts(0) {
		ids = append(ids, e.ID)
	}
	sort.Strings(ids)
	return ids
}

// Alerts fired while the webhook fails (503) or hangs are not lost when
// the indexer stops: the restarted indexer, with a working webhook, POSTs
// every one of them, each with its id as Idempotency-Key.
func TestIndexer_WebhookDeliversAfterRestart(t *testing.T) {
	t.Parallel()
	for _, fail := range []string{"503", "hang"} {
		t.Run("webhook="+fail, func(t *testing.T) {
			stream, rules := webhookSetup(t)
			js := indextest.NewStream(t, bus.StreamConfig{})
			last := indextest.Publish(t, js, stream)
			h := newAlertHook(t, 0, fail)
			cfg := index.IndexerConfig{JS: js, Dir: t.TempDir(), Rules: rules, AlertMaxLag: -1,
				CommitInterval: 10 * time.Millisecond, Webhook: newTestWebhook(t, h.URL)}

			ix, stop := indextest.RunIndexer(t, cfg)
			indextest.WaitApplied(t, ix, last)
			ids := alertIDs(t, ix)
			require.Greater(t, len(ids), 2)
			natstest.CheckFor(t, 60*time.Second, 10*time.Millisecond, func() error {
				if n, _ := h.state(); n < 3 {
					return fmt.Errorf("%d attempts", n)
				}
				return nil
			})
			require.NoError(t, stop()) // SIGTERM: the context ends
			_, accepted := h.state()
			require.Empty(t, accepted)

			h.recover()
			cfg.Webhook = newTestWebhook(t, h.URL)
			ix, _ = indextest.RunIndexer(t, cfg)
			accepted = h.waitAccepted(t, ids)
			require.Len(t, accepted, len(ids), "only the alerts fired, each under its id")
			require.Equal(t, ids, alertIDs(t, ix), "nothing fired again")
		})
	}
}

// An alert the webhook accepted is not POSTed again after a restart; those
// it did not accept are, once each, and the alerts of the restarted
// indexer follow.
func TestIndexer_WebhookDeliveredNotSentAgain(t *testing.T) {
	t.Parallel()
	_, rules := webhookSetup(t)
	files := indextest.ReadFiles(t, "../../testdata/corpus")
	rng := rand.New(rand.NewPCG(9, 9))
	firstHalf, secondHalf := indextest.Interleave(files[:len(files)/2], rng), indextest.Interleave(files[len(files)/2:], rng)
	js := indextest.NewStream(t, bus.StreamConfig{})
	last := indextest.Publish(t, js, firstHalf)
	h := newAlertHook(t, 2, "503") // two alerts accepted, then failures
	cfg := index.IndexerConfig{JS: js, Dir: t.TempDir(), Rules: rules, AlertMaxLag: -1,
		CommitInterval: 10 * time.Millisecond, Webhook: newTestWebhook(t, h.URL)}

	ix, stop := indextest.RunIndexer(t, cfg)
	indextest.WaitApplied(t, ix, last)
	first := alertIDs(t, ix)
	require.Greater(t, len(first), 3)
	natstest.CheckFor(t, 60*time.Second, 10*time.Millisecond, func() error {
		if n, accepted := h.state(); len(accepted) < 2 || n < 4 {
			return fmt.Errorf("%d attempts, %d accepted", n, len(accepted))
		}
		return nil
	})
	require.NoError(t, stop())
	_, accepted := h.state()
	require.Len(t, accepted, 2)

	h.recover()
	cfg.Webhook = newTestWebhook(t, h.URL)
	ix, stop = indextest.RunIndexer(t, cfg)
	last = indextest.Publish(t, js, secondHalf)
	indextest.WaitApplied(t, ix, last)
	all := alertIDs(t, ix)
	require.Greater(t, len(all), len(first), "the second half fires alerts too")
	// The webhook takes the alerts in stream order: once the last one
	// arrived, any alert sent again would have arrived before it.
	accepted = h.waitAccepted(t, all)
	require.NoError(t, stop())
	for _, id := range all {
		require.Equal(t, 1, accepted[id], "alert %s POSTed %d times", id, accepted[id])
	}
	require.Len(t, accepted, len(all))
}
