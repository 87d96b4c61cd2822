package store_test

import (
	"io/fs"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/store"
	"github.com/sessionpipe/sessionpipe/schema"
)

// A write the disk refuses (full: ENOSPC) is a clean error naming the
// directory and the cause, not a panic ("pebble: fatal commit error"
// used to panic through the store's logger): the commit fails, the store
// refuses everything after it (pebble may hold in memory what is not on
// disk), and Close returns the failure.
func TestStore_FailedWriteFailsTheStore(t *testing.T) {
	t.Parallel()
	var full atomic.Bool
	inject := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if full.Load() && op.Kind.ReadOrWrite() == errorfs.OpIsWrite && op.Kind != errorfs.OpFileClose && op.Kind != errorfs.OpRemove {
			return &fs.PathError{Op: "write", Path: op.Path, Err: syscall.ENOSPC}
		}
		return nil
	})
	dir := t.TempDir()
	st, err := store.Open(store.WithFS(store.Config{Dir: dir}, errorfs.Wrap(vfs.Default, inject)))
	require.NoError(t, err)
	a, err := index.New(index.Config{Store: st})
	require.NoError(t, err)
	e := schema.Entry{Format: schema.FormatPi, Host: "h", SessionID: "s", EntryID: "e1", Kind: schema.KindMessage,
		Role: schema.RoleUser, Text: "hi", TS: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	a.Add(&e)
	require.NoError(t, a.Commit(map[string][]byte{"seq": []byte("1")}, 100))

	full.Store(true)
	e.EntryID = "e2"
	a.Add(&e)
	err = a.Commit(map[string][]byte{"seq": []byte("2")}, 100)
	var se *store.Error
	require.ErrorAs(t, err, &se)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.NotErrorIs(t, err, store.ErrCorrupt, "a full disk is no reason to throw the state away")
	require.Contains(t, err.Error(), dir)
	require.Contains(t, err.Error(), "no space left on device")

	full.Store(false) // even with space again: what pebble holds is not trusted
	_, err = st.Meta("seq")
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.ErrorIs(t, a.Commit(nil, 100), syscall.ENOSPC)
	require.ErrorIs(t, st.Reset(), syscall.ENOSPC)
	require.ErrorIs(t, st.Close(), syscall.ENOSPC)

	// The next start finds the last state committed.
	st, err = store.Open(store.Config{Dir: dir})
	require.NoError(t, err)
	v, err := st.Meta("seq")
	require.NoError(t, err)
	require.Equal(t, "1", string(v))
	require.NoError(t, st.Close())
}
