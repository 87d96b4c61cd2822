package tail

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHandleList(t *testing.T) {
	var l handleList
	a, b, c := &file{path: "a"}, &file{path: "b"}, &file{path: "c"}
	order := func() []string {
		var got []string
		for f := l.head; f != nil; f = f.lruNext {
			got = append(got, f.path)
		}
		var back []string
		for f := l.tail; f != nil; f = f.lruPrev {
			back = append([]string{f.path}, back...)
		}
		require.Equal(t, got, back, "the links both ways agree")
		require.Len(t, got, l.n)
		return got
	}
	require.Empty(t, order())
	l.pushBack(a)
	l.pushBack(b)
	l.pushBack(c)
	require.Equal(t, []string{"a", "b", "c"}, order())
	l.moveToBack(a)
	require.Equal(t, []string{"b", "c", "a"}, order())
	l.moveToBack(a) // already last
	require.Equal(t, []string{"b", "c", "a"}, order())
	l.remove(c) // from the middle
	require.Equal(t, []string{"b", "a"}, order())
	l.remove(b) // the head
	require.Equal(t, []string{"a"}, order())
	l.remove(a) // the last one
	require.Empty(t, order())
	require.Nil(t, l.head)
	require.Nil(t, l.tail)
	l.pushBack(c)
	require.Equal(t, []string{"c"}, order())
}

// requireHandles checks that the tailer's list of open handles holds
// exactly its files with a handle, each once, and counts them.
func requireHandles(tb testing.TB, tl *Tailer) {
	tb.Helper()
	tl.mu.Lock()
	defer tl.mu.Unlock()
	inList := make(map[*file]bool)
	for f := tl.handles.head; f != nil; f = f.lruNext {
		require.False(tb, inList[f], "%s is in the list twice", f.path)
		require.NotNil(tb, f.handle, "%s is in the list without a handle", f.path)
		inList[f] = true
	}
	withHandle := 0
	for _, f := range tl.files {
		if f.handle != nil {
			withHandle++
			require.True(tb, inList[f], "%s has a handle and is not in the list", f.path)
		}
	}
	require.Equal(tb, withHandle, len(inList), "files in the list that the tailer no longer follows")
	require.Equal(tb, withHandle, tl.handles.n)
}

// requireInflight checks that the tailer's count of messages in flight
// is the sum of its files' counts.
func requireInflight(tb testing.TB, tl *Tailer) {
	tb.Helper()
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var sum int64
	for _, f := range tl.files {
		f.mu.Lock()
		sum += int64(f.inflight)
		f.mu.Unlock()
	}
	require.Equal(tb, sum, tl.inflight.Load())
}
