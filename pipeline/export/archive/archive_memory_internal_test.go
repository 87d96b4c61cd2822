package archive

import (
	"fmt"
	"io"
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
	var reused int64
	held := func() int64 {
		var n int64
		for _, s := range a.open {
			n += int64(s.frames.held + cap(s.pending))
		}
		for _, s := range a.waiting {
			n += int64(s.frames.held + cap(s.pending))
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
		require.LessOrEqual(t, a.blocks.bytes, max(budget-a.buffered, 0), "after chunk %d: the blocks kept fit the budget's room", i)
		reused += a.blocks.bytes
	}
	require.NoError(t, a.Close(t.Context()))
	require.Zero(t, a.buffered)
	require.Equal(t, uint64(2000), a.Committed())
	require.Positive(t, reused, "committed segments' blocks were kept for the next ones")
}

// TestFrameBuf: the blocks double from the first size up to the largest
// (or the segment's size), the bytes are kept in order across them, and
// released blocks are taken again by size, within the room given.
func TestFrameBuf(t *testing.T) {
	var pool blockPool
	var f frameBuf
	var want []byte
	r := rand.New(rand.NewPCG(3, 4))
	for len(want) < 5<<20 {
		p := make([]byte, r.IntN(300<<10))
		for i := range p {
			p[i] = byte(r.Uint32())
		}
		added := f.append(p, &pool, 32<<20)
		want = append(want, p...)
		require.Equal(t, len(want), f.n)
		held := 0
		for i, b := range f.blocks {
			held += cap(b)
			require.Equal(t, min(firstFrameBlock<<i, maxFrameBlock), cap(b), "block %d", i)
			if i < len(f.blocks)-1 {
				require.Equal(t, cap(b), len(b), "block %d is full", i)
			}
		}
		require.Equal(t, held, f.held)
		require.GreaterOrEqual(t, added, 0)
	}
	got, err := io.ReadAll(io.NewSectionReader(buffersAt(f.blocks), 0, int64(f.n)))
	require.NoError(t, err)
	require.Equal(t, want, got)
	got = make([]byte, 1000)
	n, err := buffersAt(f.blocks).ReadAt(got, int64(f.n-500))
	require.Equal(t, io.EOF, err)
	require.Equal(t, want[f.n-500:], got[:n])

	// Released within room: only what fits is kept, and taken again by size.
	held := int64(f.held)
	f.release(&pool, held-maxFrameBlock)
	require.Zero(t, f.n)
	require.LessOrEqual(t, pool.bytes, held-maxFrameBlock)
	require.Greater(t, pool.bytes, held-3*maxFrameBlock)
	kept := pool.bytes
	b := pool.get(firstFrameBlock)
	require.Equal(t, firstFrameBlock, cap(b))
	require.Zero(t, len(b))
	require.Equal(t, kept-firstFrameBlock, pool.bytes, "a kept block was taken")
	pool.trim(maxFrameBlock)
	require.LessOrEqual(t, pool.bytes, int64(maxFrameBlock))

	// A segment smaller than a block: blocks of its size.
	var small frameBuf
	small.append(make([]byte, 250), &blockPool{}, 100)
	require.Len(t, small.blocks, 3)
	for _, b := range small.blocks {
		require.Equal(t, 100, cap(b))
	}
	require.Equal(t, 250, small.n)
}

// TestArchiveWriter_IdleLetsBlocksGo: the blocks of committed segments
// are kept while chunks come, and let go at the first CommitDue after a
// period without any.
func TestArchiveWriter_IdleLetsBlocksGo(t *testing.T) {
	a, err := NewArchiveWriter(ArchiveConfig{Dir: t.TempDir(), SegmentBytes: 64 << 10, MemoryBytes: 1 << 20})
	require.NoError(t, err)
	defer a.Close(t.Context())
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 64 {
		data := make([]byte, 8<<10)
		for j := range data {
			data[j] = byte(r.Uint32()) // incompressible: segments fill
		}
		c := &bus.RawChunk{Host: "h", Path: "/p", Format: "pi", File: "1:1", Line: int64(i + 1), Lines: 1,
			Offset: int64(i) * 8 << 10, End: int64(i+1) * 8 << 10, TS: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC), Data: data}
		require.NoError(t, a.Write(t.Context(), c, uint64(i+1)))
	}
	require.NoError(t, a.Flush(t.Context()))
	require.Positive(t, a.stats.Segments)
	require.Positive(t, a.blocks.bytes, "committed segments' blocks kept")
	require.Positive(t, cap(a.spare), "the last gathering buffer kept")
	now := time.Now()
	require.NoError(t, a.CommitDue(t.Context(), now))
	require.Positive(t, a.blocks.bytes, "chunks came since the last call: kept")
	require.Positive(t, cap(a.spare))
	require.NoError(t, a.CommitDue(t.Context(), now))
	require.Zero(t, a.blocks.bytes, "none since: let go")
	require.Nil(t, a.spare, "none since: let go")
}

// The default level is zstd's own (the flags' default names it too).
func TestArchiveConfig_DefaultLevel(t *testing.T) {
	require.Equal(t, zstd.SpeedDefault, ArchiveConfig{}.withDefaults().Level)
	require.Equal(t, zstd.SpeedBestCompression, ArchiveConfig{Level: zstd.SpeedBestCompression}.withDefaults().Level)
}

// TestArchiveWriter_EarlyCommitsShareManifestWrites: when the memory
// budget closes segments early, one commit takes the largest several
// (a quarter of the budget beyond the chunk's need) with one write of the
// manifest, not one write per segment; every chunk is committed once.
func TestArchiveWriter_EarlyCommitsShareManifestWrites(t *testing.T) {
	const budget = 256 << 10
	a, err := NewArchiveWriter(ArchiveConfig{Dir: t.TempDir(), SegmentBytes: 4 << 20, MemoryBytes: budget, SegmentAge: time.Hour})
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(3, 4))
	const n = 600
	for i := range n {
		data := make([]byte, 2<<10+r.IntN(6<<10))
		for j := range data {
			data[j] = byte(r.Uint32()) // incompressible: the frames hold what the chunks hold
		}
		day := time.Date(2026, 11, 1+i%6, 9, 0, 0, 0, time.UTC)
		c := &bus.RawChunk{Host: fmt.Sprintf("h%d", i%3), Path: "/p", Format: "pi", File: fmt.Sprintf("1:%d", i),
			Line: 1, Lines: 1, End: int64(len(data)), TS: day, Data: data}
		require.NoError(t, a.Write(t.Context(), c, uint64(i+1)))
	}
	early, writes := a.stats.Segments, a.manifestWrites
	require.Positive(t, early, "the budget closed segments")
	require.GreaterOrEqual(t, early, int64(2*writes), "several segments per manifest write: %d segments, %d writes", early, writes)
	require.NoError(t, a.Close(t.Context()))
	require.Equal(t, uint64(n), a.Committed())
	var chunks int
	for _, s := range a.Segments() {
		chunks += s.Chunks
	}
	require.Equal(t, n, chunks, "each chunk in one segment")
}
