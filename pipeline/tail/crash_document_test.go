package tail

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/schema"
)

// ampDoc is an Amp thread the test grows: its messages' JSON, and what
// the last version says of each (the final content the stream must
// hold).
type ampDoc struct {
	id, path string
	msgs     []string
	out      []int // each reply's output tokens (0 for a user message)
}

func (d *ampDoc) render() string {
	return "{\n  \"v\": 1,\n  \"id\": \"" + d.id + "\",\n  \"created\": 1790154000000,\n  \"messages\": [\n    " + strings.Join(d.msgs, ",\n    ") + "\n  ]\n}\n"
}

// grow adds an exchange, or makes the last reply grow.
func (d *ampDoc) grow(rng *rand.Rand) {
	n := len(d.msgs)
	if n > 0 && d.out[n-1] > 0 && rng.IntN(3) == 0 {
		d.out[n-1] += 1 + rng.IntN(50)
		d.msgs[n-1] = ampReply(n-1, "complete", d.out[n-1])
		return
	}
	d.msgs = append(d.msgs, ampUser(n, fmt.Sprintf("q%d", n)))
	d.out = append(d.out, 0)
	d.msgs = append(d.msgs, ampReply(n+1, "complete", 1+rng.IntN(50)))
	d.out = append(d.out, 0)
	fmt.Sscanf(d.msgs[n+1][strings.Index(d.msgs[n+1], `"outputTokens":`)+len(`"outputTokens":`):], "%d", &d.out[n+1])
}

// TestTailer_KillAndRestartDocuments runs the tailer daemon while Amp
// threads are rewritten whole (in place or by rename), kills it with
// SIGKILL at random moments and restarts it: at the end the stream holds
// every message of the last versions with its last content (a reply's
// last usage), and nothing of another thread. Copies of an entry sent
// again after a kill are allowed (the consumers count a key once).
func TestTailer_KillAndRestartDocuments(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 11))
	srv := natstest.RunServer(t)
	obs := newTestStream(t, srv)
	d := newDaemon(t, buildTailer(t), srv.URL())
	docs := []*ampDoc{
		{id: "T-kill-1", path: filepath.Join(d.watch, "amp", "threads", "T-kill-1.json")},
		{id: "T-kill-2", path: filepath.Join(d.watch, "amp", "threads", "T-kill-2.json")},
	}
	save := func(doc *ampDoc) {
		if rng.IntN(2) == 0 {
			createFile(t, doc.path, doc.render())
			return
		}
		tmp := doc.path + ".tmp"
		createFile(t, tmp, doc.render())
		require.NoError(t, os.Rename(tmp, doc.path))
	}
	for _, doc := range docs {
		doc.grow(rng)
		save(doc)
	}
	for range 6 {
		d.start()
		until := time.Now().Add(time.Duration(rng.IntN(1200)) * time.Millisecond)
		for time.Now().Before(until) {
			doc := docs[rng.IntN(len(docs))]
			doc.grow(rng)
			save(doc)
			time.Sleep(time.Duration(5+rng.IntN(30)) * time.Millisecond)
		}
		d.kill()
	}
	d.start()
	for _, doc := range docs {
		doc.grow(rng)
		save(doc)
	}
	// Every message of the last versions, with its last content.
	want := map[string]int{} // session/entry id → output tokens (0: a user message)
	for _, doc := range docs {
		for i := range doc.msgs {
			want[doc.id+"/"+fmt.Sprint(i)] = doc.out[i]
		}
	}
	natstest.CheckFor(t, 2*time.Minute, 50*time.Millisecond, func() error {
		if err := obs.refresh(t.Context()); err != nil {
			return err
		}
		last := map[string]schema.Entry{}
		for _, g := range obs.msgs {
			if g.dead == nil {
				last[g.entry.SessionID+"/"+g.entry.EntryID] = g.entry
			}
		}
		for k, out := range want {
			e, ok := last[k]
			if !ok {
				return fmt.Errorf("%s not on the stream", k)
			}
			if out > 0 && (e.Usage == nil || e.Usage.Output != int64(out)) {
				return fmt.Errorf("%s: last copy has usage %v, want output %d", k, e.Usage, out)
			}
		}
		return nil
	})
	require.Equal(t, 0, d.term(), "exit code after SIGTERM")
	require.NoError(t, obs.refresh(t.Context()))
	copies := 0
	for _, g := range obs.msgs {
		require.Nil(t, g.dead, "no dead letter")
		k := g.entry.SessionID + "/" + g.entry.EntryID
		if _, ok := want[k]; !ok {
			require.Equal(t, "thread", g.entry.EntryID, "%s: an entry of no message", k)
		}
		copies++
	}
	t.Logf("%d messages in %d threads, %d entries on the stream", len(want), len(docs), copies)
}
