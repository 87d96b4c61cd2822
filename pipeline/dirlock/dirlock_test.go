//go:build unix

package dirlock

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestAcquire_SecondIsRefusedAndNamesTheHolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	l, err := Acquire(dir, "embedded JetStream store")
	require.NoError(t, err)
	require.Equal(t, dir, l.Dir())

	_, err = Acquire(dir, "embedded JetStream store")
	require.ErrorIs(t, err, ErrHeld)
	var held *HeldError
	require.ErrorAs(t, err, &held)
	require.Equal(t, os.Getpid(), held.PID)
	require.False(t, held.Since.IsZero())
	require.Contains(t, err.Error(), "in use (embedded JetStream store) by process")

	require.NoError(t, l.Release())
	require.NoError(t, l.Release(), "a second release is a no-op")
	l2, err := Acquire(dir, "x")
	require.NoError(t, err, "released: free again")
	require.NoError(t, l2.Release())
}

// TestAcquire_KilledHolderReleases runs a child process that takes the
// lock and waits; while it lives the directory is refused with its pid,
// and once it is killed with SIGKILL the lock is free: a crash never
// leaves a stale lock.
func TestAcquire_KilledHolderReleases(t *testing.T) {
	if os.Getenv("DIRLOCK_CHILD") != "" {
		l, err := Acquire(os.Getenv("DIRLOCK_CHILD"), "child")
		if err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		defer l.Release()
		os.Stdout.WriteString("locked\n")
		select {} // hold it until killed
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestAcquire_KilledHolderReleases$")
	cmd.Env = append(os.Environ(), "DIRLOCK_CHILD="+dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "locked\n", line)

	_, err = Acquire(dir, "parent")
	var held *HeldError
	require.ErrorAs(t, err, &held)
	require.Equal(t, cmd.Process.Pid, held.PID)
	require.Contains(t, held.Command, "-test.run")

	require.NoError(t, cmd.Process.Kill())
	cmd.Wait()
	l, err := Acquire(dir, "parent")
	require.NoError(t, err)
	require.NoError(t, l.Release())
}

func TestAcquire_UnwritableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		// root writes anywhere; a file in place of the directory fails
		// for everyone.
		path := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(path, nil, 0o644))
		_, err := Acquire(path, "x")
		require.Error(t, err)
		require.False(t, errors.Is(err, ErrHeld))
		return
	}
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o555))
	_, err := Acquire(dir, "x")
	require.Error(t, err)
	require.False(t, errors.Is(err, ErrHeld))
}

func TestParseHolder_Garbage(t *testing.T) {
	h := parseHolder([]byte("pid=x\ngarbage\nsince=yesterday\n"))
	require.Zero(t, h.pid)
	require.True(t, h.since.IsZero())
	e := &HeldError{Dir: "/d"}
	require.Equal(t, "/d is in use by another process: stop it, or give this one another directory", e.Error())
}

// Holder names the holder without taking the lock or writing anything,
// and a process starting while a probe holds its short shared lock waits
// it out instead of failing.
func TestHolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	h, err := Holder(dir, "x")
	require.NoError(t, err)
	require.Nil(t, h, "no lock file: nobody")

	l, err := Acquire(dir, "tailer checkpoints")
	require.NoError(t, err)
	before, err := os.ReadFile(filepath.Join(dir, FileName))
	require.NoError(t, err)
	h, err = Holder(dir, "tailer checkpoints")
	require.NoError(t, err)
	require.NotNil(t, h)
	require.Equal(t, os.Getpid(), h.PID)
	require.ErrorIs(t, h, ErrHeld)
	after, err := os.ReadFile(filepath.Join(dir, FileName))
	require.NoError(t, err)
	require.Equal(t, before, after, "the probe wrote nothing")
	require.NoError(t, l.Release())

	h, err = Holder(dir, "x")
	require.NoError(t, err)
	require.Nil(t, h, "released: nobody")

	// A probe's shared lock, held longer than a real probe holds it.
	f, err := os.Open(filepath.Join(dir, FileName))
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, flock(f, unix.LOCK_SH|unix.LOCK_NB))
	go func() {
		time.Sleep(30 * time.Millisecond)
		flock(f, unix.LOCK_UN)
	}()
	l, err = Acquire(dir, "x")
	require.NoError(t, err, "Acquire waits out a probe")
	require.NoError(t, l.Release())
}

// TryLock excludes a second open file of the same path, in this process
// too, until Unlock.
func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	a, err := os.Create(path)
	require.NoError(t, err)
	defer a.Close()
	b, err := os.Open(path)
	require.NoError(t, err)
	defer b.Close()
	ok, err := TryLock(a)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = TryLock(b)
	require.NoError(t, err)
	require.False(t, ok, "held by the other open file")
	require.NoError(t, Unlock(a))
	ok, err = TryLock(b)
	require.NoError(t, err)
	require.True(t, ok, "free after Unlock")
}
