package jsonl

import (
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// FuzzReader checks that the lines of a stream do not depend on how the
// bytes arrive: whole, or split at an arbitrary point and then one byte at
// a time, with a small maximum line length.
func FuzzReader(f *testing.F) {
	for _, l := range corpusLines(f)[:50] {
		f.Add(append(l, '\n'), uint16(len(l)/2), uint16(300))
	}
	f.Add([]byte("a\r\n\n\xEF\xBB\xBFb\nc"), uint16(3), uint16(2))
	f.Fuzz(func(t *testing.T, data []byte, split, max uint16) {
		cfg := ReaderConfig{MaxLineBytes: int(max%512) + 1, BufferSize: 3}
		wholeLines, wholeErrs, whole := readAll(t, bytes.NewReader(data), cfg)
		at := int(split) % (len(data) + 1)
		r := io.MultiReader(bytes.NewReader(data[:at]), iotest.OneByteReader(bytes.NewReader(data[at:])))
		splitLines, splitErrs, splitRd := readAll(t, r, cfg)
		require.Equal(t, wholeLines, splitLines)
		require.Equal(t, len(wholeErrs), len(splitErrs))
		require.Equal(t, whole.Offset(), splitRd.Offset())
		for _, l := range wholeLines {
			require.LessOrEqual(t, len(l.Bytes), cfg.MaxLineBytes)
			require.NotContains(t, string(l.Bytes), "\n")
			require.Less(t, l.Offset, l.End)
		}
		// Every complete line is accounted for.
		require.Equal(t, int64(bytes.LastIndexByte(data, '\n')+1), whole.Offset())
	})
}

// FuzzScanner checks the scanner against encoding/json on arbitrary input,
// the indexed cursor against the byte-by-byte one, and that neither
// panics, whatever is asked of them.
func FuzzScanner(f *testing.F) {
	for _, l := range corpusLines(f) {
		if len(l) < 4096 {
			f.Add(l)
		}
	}
	for _, tc := range edgeCases {
		f.Add([]byte(tc.in))
	}
	savedAVX2, savedIndex := hasAVX2, useIndex
	f.Cleanup(func() { hasAVX2, useIndex = savedAVX2, savedIndex })
	f.Fuzz(func(t *testing.T, data []byte) {
		// Both cursors agree with encoding/json, and with each other
		// whatever the caller asks, with each string scanner.
		hasAVX2, useIndex = savedAVX2, false
		checkDifferential(t, data)
		useIndex = true
		checkDifferential(t, data)
		seed := crc32.ChecksumIEEE(data)
		for _, avx2 := range []bool{savedAVX2, false} {
			hasAVX2 = avx2
			var indexed, bytewise Scanner
			compareWalk(t, &indexed, &bytewise, data, rand.New(rand.NewPCG(uint64(seed), 1)), 200)
		}
		hasAVX2, useIndex = savedAVX2, savedIndex
		// Early exit plus Finish must agree with a full walk on validity.
		var s Scanner
		s.Reset(data)
		for s.More() {
			if s.EnterObject() && s.NextField() {
				_ = s.Value().Equal("user")
			}
		}
		_, err := scanAll(data)
		require.Equal(t, err == nil, s.Err() == nil, "early exit: %v, full walk: %v", s.Err(), err)
		if err != nil {
			var se *SyntaxError
			require.True(t, errors.As(s.Err(), &se))
		}
	})
}
