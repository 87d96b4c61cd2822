package main

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/internal/testutil/testcorpus"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

// buildIndexer compiles this command into a temporary directory.
func buildIndexer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "indexer")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// killRounds is SESSIONPIPE_KILL_ROUNDS, the least number of SIGKILLs
// a kill test is asked for, or 0 when it is not set.
func killRounds(t *testing.T) int {
	t.Helper()
	v := os.Getenv("SESSIONPIPE_KILL_ROUNDS")
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "SESSIONPIPE_KILL_ROUNDS")
	require.GreaterOrEqual(t, n, 3, "SESSIONPIPE_KILL_ROUNDS")
	return n
}

// TestIndexer_KilledAtRandomPoints kills `indexer serve` with SIGKILL at
// random points while entries are published, state committed or not, and
// restarts it each time; the final sessions equal the offline ones:
// nothing counted twice, nothing missed. It kills about 16 times (14
// with this corpus and seed); SESSIONPIPE_KILL_ROUNDS=50 at least 50,
// going on killing while the last entries are applied if need be:
//
//	SESSIONPIPE_KILL_ROUNDS=50 go test ./cmd/indexer -run TestIndexer_KilledAtRandomPoints -timeout 30m -v
func TestIndexer_KilledAtRandomPoints(t *testing.T) {
	rounds, atLeast := 16, killRounds(t)
	if atLeast > 0 {
		rounds = atLeast
	}
	bin := buildIndexer(t)
	srv, p := newStream(t)

	var entries []schema.Entry
	mem := index.NewAggregator(price.Default())
	readCorpus(t, true, func(e *schema.Entry) {
		mem.Add(e)
		entries = append(entries, *e)
	}, testcorpus.Generate(t, 3<<20, 41), "../../testdata/corpus")
	want := mem.Sessions()

	data := t.TempDir()
	addr := freeAddr(t)
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "serve", "-http", addr, "-data-dir", data, "-log-level", "warn", "-lease-ttl", "2s")
		cmd.Env = append(os.Environ(), "NATS_URL="+srv.URL())
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	rng := rand.New(rand.NewPCG(7, 7))
	cmd := start()
	kills := 0
	for i := 0; i < len(entries) || kills < atLeast; {
		// Runs of 1 to 2×len/rounds entries: rounds kills on average.
		n := min(len(entries)-i, 1+rng.IntN(2*len(entries)/rounds))
		for _, e := range entries[i : i+n] {
			require.NoError(t, p.Publish(t.Context(), bus.EntryMsg(bus.DefaultPrefix, &e, nil), nil))
		}
		require.NoError(t, p.Flush(t.Context()))
		i += n
		// Let it apply some, sometimes past a commit, then kill it.
		wait := time.Duration(rng.IntN(1500)) * time.Millisecond
		deadline := time.Now().Add(wait)
		natstest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
			if time.Now().Before(deadline) {
				return errors.New("waiting")
			}
			return nil
		})
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		cmd.Wait()
		kills++
		cmd = start()
	}
	require.NoError(t, p.Close(t.Context()))

	var got []index.Session
	natstest.CheckFor(t, 60*time.Second, 100*time.Millisecond, func() (err error) {
		got, err = sessionsLike(t.Context(), "http://"+addr, want, "-sort", "first_ts")
		return err
	})
	byID := map[string]index.Session{}
	for _, s := range got {
		byID[string(s.Format)+"/"+s.SessionID] = s
	}
	for _, w := range want {
		g, ok := byID[string(w.Format)+"/"+w.SessionID]
		require.True(t, ok, "session %s missing", w.SessionID)
		require.Equal(t, w.TotalTokens, g.TotalTokens, "session %s tokens", w.SessionID)
		require.Equal(t, w.APICalls, g.APICalls, "session %s calls", w.SessionID)
		require.Equal(t, w.Turns, g.Turns, "session %s turns", w.SessionID)
		require.Equal(t, w.UserMessages, g.UserMessages, "session %s user messages", w.SessionID)
		require.Equal(t, w.AssistantMessages, g.AssistantMessages, "session %s assistant messages", w.SessionID)
		require.Equal(t, w.ToolCalls, g.ToolCalls, "session %s tool calls", w.SessionID)
		require.InDelta(t, w.CostUSD, g.CostUSD, 1e-9, "session %s cost", w.SessionID)
	}
	require.GreaterOrEqual(t, kills, 3)
	t.Logf("%d entries, %d kills", len(entries), kills)
}
