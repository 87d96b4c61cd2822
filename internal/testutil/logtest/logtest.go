// Package logtest gives tests a log destination that they can read while
// the code under test writes to it from other goroutines. It is for tests
// only.
package logtest

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that is safe for concurrent Write and String:
// hand it to slog.NewTextHandler and read what was logged while the
// loggers run. The zero value is an empty buffer ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
