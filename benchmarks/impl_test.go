package benchmarks

import (
	"bytes"
	"fmt"
)

// corpus is a generated corpus held in memory.
type corpus struct {
	name  string
	data  []byte   // the whole corpus, every line ending in "\n"
	lines [][]byte // the lines of data, without "\n", aliasing data
}

// decodeFunc extracts the record of every line of c, in order, and calls
// visit with each. The record is valid only during the call. It returns
// the first error, naming the line.
type decodeFunc func(c *corpus, visit func(*record)) error

// impl is one implementation under test: a decoder, or a floor that only
// touches the bytes and returns a count that can be checked.
type impl struct {
	name string

	// newDecoder returns a decoder with its own reusable state.
	newDecoder func() decodeFunc

	// floor, for floors, does the minimal work and returns a count;
	// want is what that count must be.
	floor func(c *corpus, buf []byte) int
	want  func(c *corpus) int
}

// lineError names the line an implementation failed on.
func lineError(i int, err error) error {
	return fmt.Errorf("line %d: %w", i+1, err)
}

// impls returns every implementation in the order the benchmark runs
// them. encoding/json comes first: it is the reference and the baseline
// of the ratios.
func impls() []impl {
	list := []impl{
		{name: stdName, newDecoder: libDecoder[stdContent](stdUnmarshal)},
	}
	list = append(list, jsonV2Impls()...)
	list = append(list,
		impl{name: "sessionpipe", newDecoder: newScannerDecoder},
		impl{name: "segmentio", newDecoder: libDecoder[segContent](segUnmarshal)},
		impl{name: "goccy", newDecoder: libDecoder[goccyContent](goccyUnmarshal)},
		impl{name: "sonic", newDecoder: libDecoder[sonicContent](sonicUnmarshal)},
		impl{name: "sonic-nocopy", newDecoder: libDecoder[sonicFastContent](sonicFastUnmarshal)},
		impl{name: "fastjson", newDecoder: newFastjsonDecoder},
		impl{name: "simdjson", newDecoder: newSimdjsonDecoder},
		impl{name: "simdjson-nd", newDecoder: newSimdjsonNDDecoder},
		impl{name: "floor-indexbyte", floor: floorByte('\n'), want: func(c *corpus) int { return len(c.lines) }},
		impl{name: "floor-indexbyte-quote", floor: floorByte('"'), want: func(c *corpus) int { return bytes.Count(c.data, []byte{'"'}) }},
		impl{name: "floor-copy", floor: floorCopy, want: func(c *corpus) int { return len(c.data) - len(c.lines) }},
	)
	return list
}

// floorByte returns a floor that steps from one c to the next with
// bytes.IndexByte: for '\n' the cost of splitting the corpus into lines,
// for '"' a lower bound for any scanner that must find where every string
// ends.
func floorByte(c byte) func(*corpus, []byte) int {
	return func(cp *corpus, _ []byte) int {
		n := 0
		for d := cp.data; ; {
			i := bytes.IndexByte(d, c)
			if i < 0 {
				return n
			}
			n++
			d = d[i+1:]
		}
	}
}

// floorCopy copies every line into a reused buffer, as decoders that
// copy their input first do (goccy, sonic.Unmarshal, fastjson).
func floorCopy(c *corpus, buf []byte) int {
	n := 0
	for _, l := range c.lines {
		buf = append(buf[:0], l...)
		n += len(buf)
	}
	return n
}
