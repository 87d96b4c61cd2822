package archive

import (
	"errors"
	"io"
	"slices"
)

// A segment's compressed frames are kept in blocks that double from
// firstFrameBlock (or the segment's size, if smaller) to maxFrameBlock,
// then stay at maxFrameBlock; the blocks of a committed segment are kept
// for the next segments while the memory budget has room (blockPool).
//
// The frames were one slice, doubled as it filled: every segment of 32 MiB
// allocated about 64 MiB, copied its frames at each doubling, and dropped
// it all at its commit. In `sessionpipe run` that was a tenth of the
// bytes allocated and an eighth of the process's page faults, each fresh
// buffer being memory the kernel had to map again.
const (
	firstFrameBlock = 64 << 10
	maxFrameBlock   = 1 << 20
)

// frameBuf holds a segment's compressed frames: blocks, all full but the
// last.
type frameBuf struct {
	blocks [][]byte
	n      int // bytes of frames
	held   int // the blocks' capacity: the memory held
}

// append appends p, taking the blocks it needs from pool (limit is the
// segment's size, which a block never exceeds), and returns the capacity
// added.
func (f *frameBuf) append(p []byte, pool *blockPool, limit int) (added int) {
	for len(p) > 0 {
		k := len(f.blocks)
		if k == 0 || len(f.blocks[k-1]) == cap(f.blocks[k-1]) {
			size := firstFrameBlock
			if k > 0 {
				size = 2 * cap(f.blocks[k-1])
			}
			b := pool.get(max(min(size, maxFrameBlock, limit), 1))
			f.blocks = append(f.blocks, b)
			f.held += cap(b)
			added += cap(b)
			k++
		}
		last := f.blocks[k-1]
		n := copy(last[len(last):cap(last)], p)
		f.blocks[k-1] = last[:len(last)+n]
		f.n += n
		p = p[n:]
	}
	return added
}

// release gives f's blocks to pool, as far as room allows, and empties f.
func (f *frameBuf) release(pool *blockPool, room int64) {
	for _, b := range f.blocks {
		pool.put(b, room)
	}
	*f = frameBuf{}
}

// buffersAt reads a list of byte slices as the one run of bytes they
// make (io.ReaderAt): a segment's frame blocks and its footer, for an
// upload.
type buffersAt [][]byte

func (bs buffersAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("archive: negative offset")
	}
	n := 0
	for _, b := range bs {
		if off >= int64(len(b)) {
			off -= int64(len(b))
			continue
		}
		n += copy(p[n:], b[off:])
		off = 0
		if n == len(p) {
			return n, nil
		}
	}
	return n, io.EOF
}

// blockPool keeps the frame blocks of committed segments for the next
// ones. What it keeps counts against the archive's MemoryBytes with what
// the open segments hold: put keeps a block only within room, and trim
// lets blocks go as the open segments need the memory.
type blockPool struct {
	free  [][]byte
	bytes int64
}

// get returns an empty block of capacity size, a kept one if it has one.
func (p *blockPool) get(size int) []byte {
	for i := len(p.free) - 1; i >= 0; i-- {
		if b := p.free[i]; cap(b) == size {
			p.free = slices.Delete(p.free, i, i+1)
			p.bytes -= int64(size)
			return b[:0]
		}
	}
	return make([]byte, 0, size)
}

// put keeps b if the pool then holds at most room bytes.
func (p *blockPool) put(b []byte, room int64) {
	if cap(b) > 0 && p.bytes+int64(cap(b)) <= room {
		p.free = append(p.free, b[:0])
		p.bytes += int64(cap(b))
	}
}

// trim lets blocks go until the pool holds at most room bytes.
func (p *blockPool) trim(room int64) {
	for p.bytes > max(room, 0) && len(p.free) > 0 {
		b := p.free[0]
		p.free[0] = nil
		p.free = p.free[1:]
		p.bytes -= int64(cap(b))
	}
}
