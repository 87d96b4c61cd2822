package tail

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/internal/testutil/opencodetest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/opencode"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/schema"
)

// kiloRows reads the rows of the kilo package's golden case, time_updated
// their ordinal.
func kiloRows(t *testing.T) []opencode.Row {
	t.Helper()
	f, err := os.Open("../formats/kilo/testdata/session/input.jsonl")
	require.NoError(t, err)
	defer f.Close()
	var rows []opencode.Row
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r opencode.Row
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		r.TimeCreated, r.TimeUpdated = int64(len(rows)+1), int64(len(rows)+1)
		rows = append(rows, r)
	}
	return rows
}

// A Kilo database (kilo.db, OpenCode's tables) under the watches is polled
// read-only while the CLI writes it: its rows are published as Kilo's
// entries as they are committed, a message updated in place again with
// the same usage key, and the consumers count each message once at its
// last version (the kilo package's hand-computed figures).
func TestTailer_FollowsKiloDatabase(t *testing.T) {
	h := newHarness(t)
	rows := kiloRows(t)
	w := opencodetest.Create(t, filepath.Join(h.dir, "kilo.db"))
	w.Put(rows[0])
	w.Put(rows[1]) // msg_a02 streaming
	h.start(func(c *Config) { c.DatabasePoll = 20 * time.Millisecond })
	kilos := func(n int) []schema.Entry {
		var out []schema.Entry
		natstest.CheckFor(t, time.Minute, 20*time.Millisecond, func() error {
			out = out[:0]
			all, err := h.tryStream()
			if err != nil {
				return err
			}
			for _, g := range all {
				if g.entry.Format == schema.FormatKilo {
					out = append(out, g.entry)
				}
			}
			if len(out) != n {
				return fmt.Errorf("stream holds %d kilo entries, want %d", len(out), n)
			}
			return nil
		})
		return out
	}
	kilos(2)
	for _, r := range rows[2:] {
		w.Put(r)
	}
	got := kilos(len(rows))
	h.settle(false)
	require.Len(t, h.stream(), len(rows), "each version once")

	agg := index.NewAggregator(nil)
	keys := map[string]int{}
	for i := range got {
		agg.Add(&got[i])
		if got[i].EntryID == "msg_a02" {
			keys[got[i].UsageKey]++
		}
	}
	require.Equal(t, map[string]int{"kilo:ses_k1:msg_a02": 2}, keys)
	figures := map[string][6]int64{}
	for _, s := range agg.Sessions() {
		figures[s.SessionID] = [6]int64{s.InputTokens, s.OutputTokens, s.CacheReadTokens, s.CacheWriteTokens, s.TotalTokens, s.APICalls}
	}
	require.Equal(t, map[string][6]int64{
		"ses_k1": {1500, 664, 11200, 800, 14164, 3},
		"ses_k2": {100, 70, 10, 0, 180, 1},
	}, figures)
	require.FileExists(t, filepath.Join(h.state, databaseCheckpointFile))
}
