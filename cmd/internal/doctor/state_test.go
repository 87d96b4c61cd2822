package doctor

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/dirlock"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
)

// doctorState writes an indexer state of a few records under
// data/indexer, all in one table, and returns that table's path.
func doctorState(t *testing.T, data string) string {
	t.Helper()
	state := filepath.Join(data, "indexer", "state")
	db, err := pebble.Open(state, &pebble.Options{})
	require.NoError(t, err)
	for i := range 2000 {
		require.NoError(t, db.Set(fmt.Appendf(nil, "s%08d", i), fmt.Appendf(nil, "session %d with some bytes in it", i), nil))
	}
	require.NoError(t, db.Set([]byte("mlayout"), []byte(strconv.Itoa(index.StoreLayout)), nil))
	require.NoError(t, db.Set([]byte("mseq"), []byte("42"), pebble.Sync))
	require.NoError(t, db.Compact(t.Context(), []byte{0}, []byte{0xff}, true))
	require.NoError(t, db.Close())
	ssts, err := filepath.Glob(filepath.Join(state, "*.sst"))
	require.NoError(t, err)
	require.Len(t, ssts, 1)
	return ssts[0]
}

// doctor indexer reads the indexer's state back and names a corrupt or
// missing table (it said all was well of a state the indexer could not
// open); a state an indexer holds is not read.
func TestDoctor_IndexerState(t *testing.T) {
	t.Parallel()
	check := func(data string) []Check {
		return doctorChecks(t, "indexer", nil, "-data-dir", data, "-nats-port", "-1")
	}

	data := t.TempDir()
	requireCheck(t, check(data), CheckOK, "state", "none yet")

	doctorState(t, data)
	requireCheck(t, check(data), CheckOK, "state", "reads back: 1 table in ")
	requireCheck(t, check(data), CheckOK, "state", "2002 records, applied up to stream sequence 42")

	// A state of the layout before sessions were keyed by host (it
	// records none) is rebuilt by the indexer: doctor says so.
	older := t.TempDir()
	doctorState(t, older)
	db, err := pebble.Open(filepath.Join(older, "indexer", "state"), &pebble.Options{})
	require.NoError(t, err)
	require.NoError(t, db.Delete([]byte("mlayout"), pebble.Sync))
	require.NoError(t, db.Close())
	requireCheck(t, check(older), CheckWarn, "state", "has layout 1, this version reads layout 2")

	lock, err := dirlock.Acquire(filepath.Join(data, "indexer"), "indexer state")
	require.NoError(t, err)
	requireCheck(t, check(data), CheckOK, "state", fmt.Sprintf("in use by process %d, not read", os.Getpid()))
	require.NoError(t, lock.Release())

	data = t.TempDir()
	sst := doctorState(t, data)
	b, err := os.ReadFile(sst)
	require.NoError(t, err)
	for i := len(b) / 4; i < len(b)/2; i += 101 {
		b[i] ^= 0x5a
	}
	require.NoError(t, os.WriteFile(sst, b, 0o644))
	c := requireCheck(t, check(data), CheckFail, "state", "is corrupt")
	require.Contains(t, c.Message, "checksum mismatch")
	require.Contains(t, c.Fix, "rebuilds it from the stream")

	data = t.TempDir()
	require.NoError(t, os.Remove(doctorState(t, data)))
	c = requireCheck(t, check(data), CheckFail, "state", "is corrupt")
	require.Contains(t, c.Message, "file does not exist")
}
