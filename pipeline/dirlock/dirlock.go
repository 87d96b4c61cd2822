// Package dirlock makes one process the owner of a directory: a data
// directory holding an embedded JetStream store, or a tailer's checkpoint
// directory. Two processes writing one store corrupt it; a second process
// must refuse to start and say which process holds the directory.
//
// The lock is an OS advisory lock (flock) on a file named LOCK inside the
// directory, so it is released by the kernel when the holder exits, even
// by kill -9: a stale lock file never blocks a restart. The file also
// records the holder's process id, command and start time, which is what
// the error of a second process shows.
package dirlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// FileName is the name of the lock file inside a locked directory.
const FileName = "LOCK"

// ErrHeld is wrapped by the *HeldError that [Acquire] returns when another
// process (or another Acquire in this one) holds the directory. The caller
// must not use the directory; retrying helps only once the holder stopped.
var ErrHeld = errors.New("dirlock: directory in use by another process")

// HeldError reports the holder of a locked directory, as far as its lock
// file tells (PID is 0 when the file could not be read).
type HeldError struct {
	Dir     string    // the locked directory
	What    string    // what the holder uses it for, e.g. "tailer checkpoints"
	PID     int       // the holder's process id
	Command string    // the holder's command line, shortened
	Since   time.Time // when the holder took the lock
}

// Error says which process holds the directory and what to do.
func (e *HeldError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s is in use", e.Dir)
	if e.What != "" {
		fmt.Fprintf(&b, " (%s)", e.What)
	}
	b.WriteString(DescribeHolder(e.PID, e.Command, e.Since))
	b.WriteString(": stop it, or give this one another directory")
	return b.String()
}

// DescribeHolder names a lock's holder as the errors of this package do:
// " by process PID (COMMAND) since TIME", or " by another process" when
// the lock does not say who holds it.
func DescribeHolder(pid int, command string, since time.Time) string {
	if pid <= 0 {
		return " by another process"
	}
	s := fmt.Sprintf(" by process %d", pid)
	if command != "" {
		s += fmt.Sprintf(" (%s)", command)
	}
	if !since.IsZero() {
		s += " since " + since.Format(time.RFC3339)
	}
	return s
}

// Unwrap returns [ErrHeld].
func (e *HeldError) Unwrap() error { return ErrHeld }

// Lock is a held directory lock. Release it when done; the process exit
// releases it too.
type Lock struct {
	dir     string
	release func() error
}

// Dir returns the locked directory.
func (l *Lock) Dir() string { return l.dir }

// Release gives the directory up. It is safe to call more than once and
// on a nil *Lock.
func (l *Lock) Release() error {
	if l == nil || l.release == nil {
		return nil
	}
	r := l.release
	l.release = nil
	return r()
}

// holder is the content of a lock file.
type holder struct {
	pid     int
	command string
	since   time.Time
}

// encode renders h as the lock file's text: three "key=value" lines.
func (h holder) encode() []byte {
	return fmt.Appendf(nil, "pid=%d\ncommand=%s\nsince=%s\n", h.pid, h.command, h.since.UTC().Format(time.RFC3339Nano))
}

// parseHolder reads what encode wrote; unknown or broken lines are ignored.
func parseHolder(data []byte) holder {
	var h holder
	for line := range strings.SplitSeq(string(data), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		switch k {
		case "pid":
			h.pid, _ = strconv.Atoi(v)
		case "command":
			h.command = v
		case "since":
			h.since, _ = time.Parse(time.RFC3339Nano, v)
		}
	}
	return h
}

func lockPath(dir string) string { return filepath.Join(dir, FileName) }

// Record returns what this process writes into a lock file it took: its
// pid, command line and the time, as "key=value" lines. Other locks of
// the project (the exporter's manifest lock) write it too, so that one
// reader names every holder.
func Record() []byte {
	return holder{pid: os.Getpid(), command: command(), since: time.Now()}.encode()
}

// ParseRecord reads what Record wrote; unknown or broken lines are
// ignored (a zero pid: the holder is not known).
func ParseRecord(data []byte) (pid int, command string, since time.Time) {
	h := parseHolder(data)
	return h.pid, h.command, h.since
}

// command is this process's command line, shortened for an error message.
func command() string {
	c := strings.Join(os.Args, " ")
	if len(c) > 200 {
		c = c[:200] + "…"
	}
	return strings.ReplaceAll(c, "\n", " ")
}
