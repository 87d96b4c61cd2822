package jsonl

import (
	"bytes"
	"fmt"
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

func BenchmarkScanner(b *testing.B) {
	lines := corpusLines(b)
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	impls := []struct {
		name string
		avx2 bool
	}{{"avx2", true}, {"swar", false}}
	saved := hasAVX2
	b.Cleanup(func() { hasAVX2 = saved })
	for _, impl := range impls {
		if impl.avx2 && !saved {
			continue
		}
		b.Run(fmt.Sprintf("corpus=testdata/strings=%s", impl.name), func(b *testing.B) {
			hasAVX2 = impl.avx2
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
