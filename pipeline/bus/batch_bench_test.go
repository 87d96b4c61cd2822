package bus_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionpipe/sessionpipe/internal/testutil/testcorpus"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/schema"
)

// benchLines returns about n bytes of generated transcript lines and the entries' JSON lines of as many
// bytes again (the shape of a batch message's content).
func benchLines(b *testing.B, n int) (raw, jsonl []byte) {
	b.Helper()
	var src []byte
	err := filepath.WalkDir(testcorpus.Generate(b, 4<<20, 1), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || len(src) > 2*n {
			return err
		}
		data, err := os.ReadFile(path)
		src = append(src, data...)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	for len(raw) < n {
		raw = append(raw, src[:min(len(src), n-len(raw))]...)
	}
	if i := bytes.LastIndexByte(raw, '\n'); i > 0 {
		raw = raw[:i+1]
	}
	for i := 0; len(jsonl) < len(raw)/2; i++ {
		jsonl = append(testEntry(i).AppendJSON(jsonl), '\n')
	}
	return raw, jsonl
}

// BenchmarkBatchMsg measures building one batch message of about 512 KiB
// of original lines and their entries (the tailer's default batch),
// bytes counted are the input's.
func BenchmarkBatchMsg(b *testing.B) {
	raw, jsonl := benchLines(b, 512<<10)
	chunk := &bus.RawChunk{Host: "h", Path: "/p", Format: "claude-code", File: "1:2", Offset: 0, End: int64(len(raw)), Line: 1, Lines: 100, Data: raw}
	span := bus.BatchSpan{Host: "h", Format: "claude-code", File: "1:2", End: int64(len(raw)), Line: 1, Lines: 100}
	b.SetBytes(int64(len(raw) + len(jsonl)))
	b.ReportAllocs()
	var size int
	for b.Loop() {
		m, err := bus.BatchMsg(bus.DefaultPrefix, span, jsonl, 10, chunk)
		if err != nil {
			b.Fatal(err)
		}
		size = len(m.Data)
	}
	b.ReportMetric(float64(size)/float64(len(raw)+len(jsonl)), "ratio")
}

// BenchmarkBatchMsg_Released is BenchmarkBatchMsg with each message
// handed back once used, as the tailer does once the server stored it.
func BenchmarkBatchMsg_Released(b *testing.B) {
	raw, jsonl := benchLines(b, 512<<10)
	chunk := &bus.RawChunk{Host: "h", Path: "/p", Format: "claude-code", File: "1:2", Offset: 0, End: int64(len(raw)), Line: 1, Lines: 100, Data: raw}
	span := bus.BatchSpan{Host: "h", Format: "claude-code", File: "1:2", End: int64(len(raw)), Line: 1, Lines: 100}
	b.SetBytes(int64(len(raw) + len(jsonl)))
	b.ReportAllocs()
	for b.Loop() {
		m, err := bus.BatchMsg(bus.DefaultPrefix, span, jsonl, 10, chunk)
		if err != nil {
			b.Fatal(err)
		}
		bus.ReleaseBatchMsg(m)
	}
}

// BenchmarkBatchDecoder_Entries measures a consumer's reading of the
// entries of such a message: decompression and one EntryDecoder pass.
func BenchmarkBatchDecoder_Entries(b *testing.B) {
	raw, jsonl := benchLines(b, 512<<10)
	n := bytes.Count(jsonl, []byte{'\n'})
	chunk := &bus.RawChunk{Host: "h", Path: "/p", Format: "claude-code", File: "1:2", Offset: 0, End: int64(len(raw)), Line: 1, Lines: 100, Data: raw}
	m, err := bus.BatchMsg(bus.DefaultPrefix, bus.BatchSpan{Host: "h", Format: "claude-code", File: "1:2"}, jsonl, n, chunk)
	if err != nil {
		b.Fatal(err)
	}
	var d bus.BatchDecoder
	var ed bus.EntryDecoder
	var e schema.Entry
	b.SetBytes(int64(len(jsonl)))
	b.ReportAllocs()
	for b.Loop() {
		if err := d.Entries(m.Header, m.Data, func(line []byte) error { return ed.Decode(line, &e) }); err != nil {
			b.Fatal(err)
		}
	}
}
