package bus_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/testcorpus"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
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

// BenchmarkBatchMsg measures building the messages of one batch of about
// 512 KiB of original lines (the tailer's default batch): the batch
// message of their entries and the raw chunk message of the lines
// themselves, as the tailer sends them when archiving; bytes counted are
// the input's.
func BenchmarkBatchMsg(b *testing.B) {
	benchBatchMsgs(b, false)
}

// BenchmarkBatchMsg_Released is BenchmarkBatchMsg with each message
// handed back once used, as the tailer does once the server stored it.
func BenchmarkBatchMsg_Released(b *testing.B) {
	benchBatchMsgs(b, true)
}

func benchBatchMsgs(b *testing.B, release bool) {
	raw, jsonl := benchLines(b, 512<<10)
	chunk := &bus.RawChunk{Host: "h", Path: "/p", Format: "claude-code", File: "1:2", Offset: 0, End: int64(len(raw)), Line: 1, Lines: 100, Data: raw}
	span := bus.BatchSpan{Host: "h", Format: "claude-code", File: "1:2", End: int64(len(raw)), Line: 1, Lines: 100}
	b.SetBytes(int64(len(raw) + len(jsonl)))
	b.ReportAllocs()
	var size int
	for b.Loop() {
		m, err := bus.BatchMsg(bus.DefaultPrefix, span, jsonl, 10)
		if err != nil {
			b.Fatal(err)
		}
		rm, err := bus.RawMsgs(bus.DefaultPrefix, chunk, 0)
		if err != nil {
			b.Fatal(err)
		}
		size = len(m.Data)
		for _, r := range rm {
			size += len(r.Data)
		}
		if release {
			bus.ReleaseBatchMsg(m)
			for _, r := range rm {
				bus.ReleaseBatchMsg(r)
			}
		}
	}
	if !release {
		b.ReportMetric(float64(size)/float64(len(raw)+len(jsonl)), "ratio")
	}
}

// BenchmarkBatchDecoder_Entries measures a consumer's reading of the
// entries of such a message: decompression and one EntryDecoder pass.
func BenchmarkBatchDecoder_Entries(b *testing.B) {
	raw, jsonl := benchLines(b, 512<<10)
	n := bytes.Count(jsonl, []byte{'\n'})
	m, err := bus.BatchMsg(bus.DefaultPrefix, bus.BatchSpan{Host: "h", Format: "claude-code", File: "1:2", End: int64(len(raw))}, jsonl, n)
	if err != nil {
		b.Fatal(err)
	}
	var d bus.BatchDecoder
	var ed bus.EntryDecoder
	var e schema.Entry
	b.SetBytes(int64(len(jsonl)))
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	for b.Loop() {
		if err := d.Entries(m.Header, m.Data, func(line []byte) error { return ed.Decode(line, &e) }); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0, len(jsonl))
}

// cpuTime returns the process's user and system CPU time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds MB/cpu-s, the bytes of each iteration over the
// process's CPU time since cpu0 (the garbage collector's included): on
// a shared machine the time waiting for a core, which MB/s counts, is
// not in it.
func reportCPU(b *testing.B, cpu0 time.Duration, size int) {
	if cpu := cpuTime(b) - cpu0; cpu > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}

// corpusBatches returns batch messages of the entries the tailer
// publishes for a generated tree (text on, no raw records, as `run`
// publishes them), each of about 512 KiB of entries' JSON, and the
// entries' bytes in all.
func corpusBatches(b *testing.B) (msgs []*nats.Msg, size int) {
	b.Helper()
	found, err := formats.Walk([]string{testcorpus.Generate(b, 4<<20, 2)}, func(err error) { b.Fatal(err) })
	require.NoError(b, err)
	var jsonl []byte
	n := 0
	flush := func() {
		m, err := bus.BatchMsg(bus.DefaultPrefix, bus.BatchSpan{Host: "h", Format: "claude-code", File: "1:2"}, jsonl, n)
		require.NoError(b, err)
		msgs = append(msgs, m)
		size += len(jsonl)
		jsonl, n = nil, 0
	}
	for _, f := range found {
		if f.Meta {
			continue
		}
		_, err := formats.ReadFile(context.Background(), f.Path, formats.ReadConfig{Config: parse.Config{Host: "h", Text: true}},
			func(e *schema.Entry) {
				jsonl = append(e.AppendJSON(jsonl), '\n')
				if n++; len(jsonl) >= 512<<10 {
					flush()
				}
			}, func(error) {})
		if err != nil && !errors.Is(err, formats.ErrUnknownFormat) {
			require.NoError(b, err)
		}
	}
	if n > 0 {
		flush()
	}
	return msgs, size
}

// BenchmarkBatchDecoder_Corpus measures a consumer's reading of the
// batch messages of a generated tree: decompression and one EntryDecoder
// pass, as the exporter decodes (decoder=full) and as the indexer does
// (decoder=lite).
func BenchmarkBatchDecoder_Corpus(b *testing.B) {
	msgs, size := corpusBatches(b)
	for _, lite := range []bool{false, true} {
		name := "decoder=full"
		if lite {
			name = "decoder=lite"
		}
		b.Run(name, func(b *testing.B) {
			var d bus.BatchDecoder
			ed := bus.EntryDecoder{Lite: lite}
			var e schema.Entry
			entries := 0
			b.SetBytes(int64(size))
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			for b.Loop() {
				entries = 0
				for _, m := range msgs {
					err := d.Entries(m.Header, m.Data, func(line []byte) error {
						entries++
						return ed.Decode(line, &e)
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			reportCPU(b, cpu0, size)
			b.ReportMetric(float64(entries)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}
