package formattest

import (
	"errors"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// recorder is a testing.TB that records a failure instead of failing the
// test, so that the helpers can be shown to fail when they must.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) FailNow()              { r.failed = true; panic(r) }

// fails reports whether f fails the recorder it is given.
func fails(t *testing.T, f func(tb testing.TB)) bool {
	r := &recorder{TB: t}
	var wg sync.WaitGroup
	wg.Go(func() {
		defer func() {
			if p := recover(); p != nil && p != any(r) {
				panic(p)
			}
		}()
		f(r)
	})
	wg.Wait()
	return r.failed
}

// textParser gives one message entry per line whose text is the line; it
// copies the line unless alias is set.
type textParser struct{ alias bool }

func (p textParser) Parse(dst []schema.Entry, line jsonl.Line) ([]schema.Entry, error) {
	text := string(line.Bytes)
	if p.alias {
		text = unsafe.String(unsafe.SliceData(line.Bytes), len(line.Bytes))
	}
	return append(dst, schema.Entry{
		Format: schema.FormatFluux, SessionID: "s", EntryID: "e", Kind: schema.KindMessage,
		Role: schema.RoleUser, Line: line.Number, Offset: line.Offset, Text: text,
	}), nil
}

func TestRequireOwned(t *testing.T) {
	lines := Lines(t, []byte("one\ntwo\n"))
	require.False(t, fails(t, func(tb testing.TB) { RequireOwned(tb, textParser{}, lines...) }))
	require.True(t, fails(t, func(tb testing.TB) { RequireOwned(tb, textParser{alias: true}, lines...) }))
}

func TestRequireLocated(t *testing.T) {
	line := jsonl.Line{Bytes: []byte(`{"a":1}`), Offset: 100, Number: 3}
	located := func(n, off int64) error {
		return &schema.DecodeError{Path: "p", Line: n, Offset: off, Err: errors.New("bad")}
	}
	tests := []struct {
		name  string
		err   error
		fails bool
	}{
		{"AtStart", located(3, 100), false},
		{"AtEnd", located(3, 107), false},
		{"OtherLine", located(4, 100), true},
		{"BeforeLine", located(3, 99), true},
		{"AfterLine", located(3, 108), true},
		{"NotDecodeError", errors.New("bad"), true},
	}
	for _, tt := range tests {
		got := fails(t, func(tb testing.TB) { RequireLocated(tb, tt.err, line) })
		require.Equal(t, tt.fails, got, "RequireLocated(%v) fails = %v, want %v", tt.name, got, tt.fails)
	}
}
