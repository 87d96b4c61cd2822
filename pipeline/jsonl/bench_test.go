package jsonl

import (
	"bytes"
	"io"
	"testing"
)

// extract walks a Claude-, pi- or Codex-shaped line the way the format
// parsers do: a few top-level fields, the message and payload objects, and
// everything else skipped and validated.
func extract(s *Scanner) (n int) {
	for s.More() {
		if !s.EnterObject() {
			continue
		}
		for s.NextField() {
			switch string(s.Key()) {
			case "type", "uuid", "sessionId", "timestamp", "parentUuid", "requestId", "id", "parentId":
				n += len(s.Value().Raw())
			case "message", "payload":
				if !s.EnterObject() {
					continue
				}
				for s.NextField() {
					switch string(s.Key()) {
					case "id", "model", "role", "type":
						n += len(s.Value().Raw())
					case "usage", "info":
						if s.EnterObject() {
							for s.NextField() {
								v := s.Value()
								x, _ := v.Int()
								n += int(x & 1)
							}
						}
					}
				}
			}
		}
	}
	return n
}

// BenchmarkScanner walks the testdata transcripts as the format parsers
// do (extract), in each configuration: strings=avx2 is what runs on amd64
// with AVX2 (the structural index), strings=swar what runs elsewhere;
// cursor=bytewise is the byte-by-byte cursor with the AVX2 string scanner,
// for comparison.
func BenchmarkScanner(b *testing.B) {
	lines := corpusLines(b)
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	impls := []struct {
		name        string
		index, avx2 bool
	}{
		{"strings=avx2", true, true},
		{"strings=swar", false, false},
		{"cursor=bytewise/strings=avx2", false, true},
	}
	savedAVX2, savedIndex := hasAVX2, useIndex
	b.Cleanup(func() { hasAVX2, useIndex = savedAVX2, savedIndex })
	for _, impl := range impls {
		if impl.avx2 && !savedAVX2 {
			continue
		}
		b.Run("corpus=testdata/"+impl.name, func(b *testing.B) {
			hasAVX2, useIndex = impl.avx2, impl.index
			var s Scanner
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				for _, line := range lines {
					s.Reset(line)
					extract(&s)
				}
			}
			if s.Err() != nil {
				b.Fatal(s.Err())
			}
		})
	}
}

// BenchmarkValidate validates every line without reading anything:
// the cost of the structural index plus skipping.
func BenchmarkValidate(b *testing.B) {
	lines := corpusLines(b)
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	var s Scanner
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, line := range lines {
			s.Reset(line)
			for s.More() {
			}
			if s.Err() != nil {
				b.Fatal(s.Err())
			}
		}
	}
}

func BenchmarkReader(b *testing.B) {
	lines := corpusLines(b)
	data := bytes.Join(lines, []byte("\n"))
	data = append(data, '\n')
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	r := bytes.NewReader(data)
	rd := NewReader(r, ReaderConfig{})
	for b.Loop() {
		r.Reset(data)
		rd.Reset(r, 0, 0)
		for {
			_, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}
