package jsonl

import "math/bits"

// The structural index
//
// On amd64 with AVX2 a Scanner does not look for the end of each string
// and the next comma byte by byte: an indexer (structural_amd64.s) reads
// the line 64 bytes at a time and marks, in a 64-bit mask per block, its
// entries: every unescaped quote (opening and closing), every { } [ ] : ,
// outside strings, and the first byte of every number or literal. The
// cursor (indexed.go, and the fast paths of scanner.go) then moves from
// entry to entry. A window of blocks is indexed at a time, inside the
// Scanner, so that indexing never allocates.
//
// The indexer also validates the content of strings (control characters,
// escapes, the digits of \u escapes) and stops at the first block that
// fails: the entries of the blocks before it stand, and the cursor hands
// over to the byte-by-byte cursor (scalar.go, skip.go) when it runs out of
// entries or meets anything unexpected. That cursor then reports the error
// with its exact offset and message, so both fail identically. Numbers,
// literals and the grammar are checked by the indexed cursor.
//
// For each block the indexer also marks the closing quotes of strings that
// need attention, because they hold a backslash or a byte above 0x7F: the
// others are plain ASCII and need neither unescaping nor UTF-8 checks.

// window is the number of blocks with entries a Scanner indexes ahead.
const window = 128

// blockBytes is the indexer's unit.
const blockBytes = 64

// indexedBlock is the index of one 64-byte block that holds entries.
// Bit i of a mask stands for byte pos+i. Its layout is known to
// structural_amd64.s.
type indexedBlock struct {
	entries uint64 // the structural bytes
	attn    uint64 // the closing quotes of strings that need attention
	pos     int    // offset of the block in the data
}

// indexState carries the indexer from one block to the next. Its layout
// is known to structural_amd64.s.
type indexState struct {
	inString uint64 // all ones if the previous block ended inside a string
	escaped  uint64 // 1 if the first byte of the next block is escaped
	scalar   uint64 // 1 if the previous block ended with a non-structural byte
	attn     uint64 // 1 if the string open at the end of the block needs attention
	uDigits  uint64 // the bytes of the next block that must be \u hex digits
}

// spaces pads the last block of the data.
const spaces = "                                                                "

// resetIndex prepares the index for new data.
func (s *Scanner) resetIndex() {
	s.fast = useIndex
	s.bm, s.ba, s.bp, s.bi, s.nb = 0, 0, 0, 0, 0
	s.ipos, s.idone = 0, false
	s.ist = indexState{}
}

// nextBlock moves to the next block of the window and reports whether
// there was one; advance does the same and refills the window. The
// cursor's hot loops call nextBlock first because it is inlined.
func (s *Scanner) nextBlock() bool {
	bi := s.bi + 1
	if bi >= s.nb {
		return false
	}
	s.bi = bi
	b := &s.blocks[bi&(window-1)]
	s.bm, s.ba, s.bp = b.entries, b.attn, b.pos
	return true
}

// advance moves to the next block with entries, indexing more of the
// data when the window is used up. It returns false when the data is
// fully indexed or a block failed the checks.
func (s *Scanner) advance() bool {
	bi := s.bi + 1
	if bi >= s.nb {
		if !s.refill() {
			return false
		}
		bi = 0
	}
	s.bi = bi
	b := &s.blocks[bi&(window-1)]
	s.bm, s.ba, s.bp = b.entries, b.attn, b.pos
	return true
}

// refill indexes the next blocks of the data into the window and reports
// whether the window holds any.
//
// Every entry lies in the data, which lets the cursor read the bytes of
// entries without bounds checks (see entryByte): the indexer reads whole
// blocks of the data only (a block is indexed only if its 64 bytes are
// there) and the padded copy of the last one, whose entries are checked
// here.
func (s *Scanner) refill() bool {
	s.bi, s.nb = 0, 0
	for !s.idone && s.nb == 0 {
		rest := s.data[s.ipos:]
		if len(rest) == 0 {
			s.idone = true
			break
		}
		// The last, partial block is indexed from a copy padded with
		// spaces.
		var tail *[blockBytes]byte
		r := len(rest) % blockBytes
		if r != 0 {
			copy(s.tail[copy(s.tail[:], rest[len(rest)-r:]):], spaces)
			tail = &s.tail
		}
		read, wrote, bad := indexer(rest, tail, s.ipos, &s.ist, s.blocks[:])
		read = min(read, len(rest))
		if read < 0 || wrote < 0 || wrote > len(s.blocks) || read == 0 && !bad {
			bad, wrote = true, 0 // an indexer that breaks its contract: hand over
		}
		if tail != nil && read == len(rest) && wrote > 0 {
			if b := &s.blocks[wrote-1]; b.pos == s.ipos+len(rest)-r && b.entries>>uint(r) != 0 {
				bad, wrote = true, 0 // not possible: the padding holds no entry
			}
		}
		s.ipos += read
		s.nb = wrote
		s.idone = bad || s.ipos == len(s.data)
	}
	return s.nb > 0
}

// indexBlocksGeneric is the portable indexer, and the specification of
// indexBlocksAVX2, which must give the same results (tests check one
// against the other and both against a byte-at-a-time model).
//
// It indexes the 64-byte blocks of p in order, then, if tail is not nil,
// the 64 bytes of tail as the block that follows them (the last, partial
// block of the data, padded with spaces). The block at p[i:] has offset
// base+i. A block that holds entries is recorded in out; st carries the
// state from block to block and from call to call. It stops when out is
// full, and at the first block that fails a check: control characters in
// strings, escapes other than \" \\ \/ \b \f \n \r \t \u, and \u
// not followed by four hex digits. That block is not recorded and bad is
// true. read is the offset of the first block not indexed, relative to
// base (past len(p) once the tail is indexed), wrote the number of
// blocks recorded.
func indexBlocksGeneric(p []byte, tail *[blockBytes]byte, base int, st *indexState, out []indexedBlock) (read, wrote int, bad bool) {
	const even = 0x5555555555555555
	for wrote < len(out) {
		var block []byte
		switch {
		case len(p)-read >= blockBytes:
			block = p[read : read+blockBytes]
		case tail != nil:
			block, tail = tail[:], nil
		default:
			return read, wrote, false
		}
		var quotes, backslashes, ctrl, ws, op, escOK, hex, u, high uint64
		for i, c := range block {
			bit := uint64(1) << i
			switch c {
			case '"':
				quotes |= bit
			case '\\':
				backslashes |= bit
			case ' ', '\t', '\n', '\r':
				ws |= bit
			case '{', '}', '[', ']', ':', ',', 0x0C, 0x1A: // as the assembly's table
				op |= bit
			case '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				u |= bit
			}
			switch c {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't', 'u':
				escOK |= bit
			}
			if c < 0x20 {
				ctrl |= bit
			}
			if c >= 0x80 {
				high |= bit
			}
			if isHex(c) {
				hex |= bit
			}
		}

		// Escaped bytes, as in simdjson's find_escaped_branchless.
		var escaped uint64
		if backslashes|st.escaped != 0 {
			bs := backslashes &^ st.escaped
			follows := bs<<1 | st.escaped
			oddStarts := bs &^ even &^ follows
			sum, carry := bits.Add64(oddStarts, bs, 0)
			st.escaped = carry
			escaped = (even ^ sum<<1) & follows
		}
		q := quotes &^ escaped
		inStr := prefixXOR(q) ^ st.inString
		st.inString = uint64(int64(inStr) >> 63)

		digits := st.uDigits
		st.uDigits = 0
		if escaped != 0 {
			if escaped&^escOK != 0 {
				return read, wrote, true
			}
			if ue := escaped & u; ue != 0 {
				digits |= ue<<1 | ue<<2 | ue<<3 | ue<<4
				t := ue >> 60
				st.uDigits = t | t>>1 | t>>2 | t>>3
			}
		}
		if ctrl&inStr != 0 || digits&^hex != 0 {
			return read, wrote, true
		}

		var attn uint64
		if x := (backslashes | high) & inStr; x|st.attn != 0 {
			sum, carry := bits.Add64(inStr, x, st.attn)
			st.attn = carry
			attn = sum & q &^ inStr
		}

		scalar := ^(ws | op | q)
		starts := scalar &^ (scalar<<1 | st.scalar)
		st.scalar = scalar >> 63
		entries := (op|starts)&^inStr | q

		if entries != 0 {
			out[wrote] = indexedBlock{entries: entries, attn: attn, pos: base + read}
			wrote++
		}
		read += blockBytes
	}
	return read, wrote, false
}

// prefixXOR returns the mask whose bit i is the XOR of bits 0..i of m.
func prefixXOR(m uint64) uint64 {
	m ^= m << 1
	m ^= m << 2
	m ^= m << 4
	m ^= m << 8
	m ^= m << 16
	m ^= m << 32
	return m
}
