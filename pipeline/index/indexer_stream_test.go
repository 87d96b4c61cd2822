package index_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/indextest"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/schema"
)

// An indexer of a stream of another name than the default one, with a
// new state, waits for that stream (not the default one) and indexes it
// once it is created.
func TestIndexer_WaitsForItsOwnStream(t *testing.T) {
	srv := natstest.RunServer(t)
	js := natstest.JetStream(t, natstest.Connect(t, srv.URL()))
	sc := bus.StreamConfig{Name: "OTHER", Prefix: "other"}
	ix, err := index.NewIndexer(index.IndexerConfig{JS: js, Stream: sc, Dir: t.TempDir(), CommitInterval: 50 * time.Millisecond})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var runErr error
	wg.Go(func() { runErr = ix.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		require.NoError(t, runErr)
	})
	select {
	case <-ix.Ready():
		require.FailNow(t, "ready before its stream exists")
	default:
	}

	_, err = bus.EnsureStream(t.Context(), js, sc)
	require.NoError(t, err)
	select {
	case <-ix.Ready():
	case <-time.After(30 * time.Second):
		require.FailNow(t, "indexer did not find its stream")
	}
	e := &schema.Entry{Format: schema.FormatClaudeCode, Host: "h", SessionID: "s1", EntryID: "e1",
		TS: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Kind: schema.KindMessage, Role: schema.RoleUser, Text: "hi"}
	ack, err := js.PublishMsg(t.Context(), bus.EntryMsg(sc.Prefix, e, nil))
	require.NoError(t, err)
	require.Equal(t, "OTHER", ack.Stream)
	indextest.WaitApplied(t, ix, ack.Sequence)
	sessions, err := ix.Sessions()
	require.NoError(t, err)
	require.Len(t, sessions, 1)
}
