package archive

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

// TestArchiveWriter_MemoryHeld: what the writer counts against
// MemoryBytes is the memory its open segments hold, spare room of their
// buffers included, and it stays within the budget plus one segment
// whatever the chunks' sizes, partitions and compressibility; a commit
// that fails and is tried again leaves the segment's bytes as they were.
func TestArchiveWriter_MemoryHeld(t *testing.T) {
	const budget, segBytes = 256 << 10, 96 << 10
	a, err := NewArchiveWriter(ArchiveConfig{Dir: t.TempDir(), SegmentBytes: segBytes, MemoryBytes: budget})
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(1, 2))
	held := func() int64 {
		var n int64
		for _, s := range a.open {
			n += int64(cap(s.frames) + cap(s.pending))
		}
		for _, s := range a.waiting {
			n += int64(cap(s.frames) + cap(s.pending))
		}
		return n
	}
	for i := range 2000 {
		data := make([]byte, 1+r.IntN(24<<10))
		if r.IntN(2) == 0 { // incompressible
			for j := range data {
				data[j] = byte(r.Uint32())
			}
		} else {
			for j := range data {
				data[j] = "abc\n"[j%4]
			}
		}
		day := time.Date(2026, 11, 1+r.IntN(6), 9, 0, 0, 0, time.UTC)
		c := &bus.RawChunk{Host: fmt.Sprintf("h%d", r.IntN(3)), Path: "/p", Format: "pi", File: fmt.Sprintf("1:%d", i),
			Line: 1, Lines: 1, End: int64(len(data)), TS: day, Data: data}
		require.NoError(t, a.Write(t.Context(), c, uint64(i+1)))
		require.Equal(t, held(), a.buffered, "after chunk %d: the count is the memory held", i)
		require.LessOrEqual(t, a.buffered, int64(budget+segBytes+(24<<10)+64), "after chunk %d", i)
	}
	require.NoError(t, a.Close(t.Context()))
	require.Zero(t, a.buffered)
	require.Equal(t, uint64(2000), a.Committed())
}

// TestAppendFrame: the storage doubles, never past the segment's limit
// unless one frame needs it, and the bytes are kept.
func TestAppendFrame(t *testing.T) {
	var frames, want []byte
	for i := range 300 {
		f := []byte(fmt.Sprintf("frame %d;", i))
		frames = appendFrame(frames, f, 1000)
		want = append(want, f...)
		require.Equal(t, want, frames)
		require.LessOrEqual(t, cap(frames), max(len(frames), 64<<10))
	}
	small := appendFrame(nil, []byte("x"), 100)
	require.Equal(t, 100, cap(small), "a first buffer no larger than the limit")
	big := appendFrame(small, make([]byte, 500), 100)
	require.Equal(t, 501, len(big))
	require.Equal(t, 501, cap(big), "past the limit only by what the frame needs")
}

// The default level is zstd's own (the flags' default names it too).
func TestArchiveConfig_DefaultLevel(t *testing.T) {
	require.Equal(t, zstd.SpeedDefault, ArchiveConfig{}.withDefaults().Level)
	require.Equal(t, zstd.SpeedBestCompression, ArchiveConfig{Level: zstd.SpeedBestCompression}.withDefaults().Level)
}
