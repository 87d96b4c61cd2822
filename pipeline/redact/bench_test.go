package redact_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/testcorpus"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/redact"
	"github.com/sessionpipe/sessionpipe/schema"
)

// readEntries returns the entries of every transcript under dir, with
// text and raw lines.
func readEntries(tb testing.TB, dir string) []schema.Entry {
	tb.Helper()
	var entries []schema.Entry
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		_, err = formats.ReadFile(context.Background(), path, formats.ReadConfig{Config: parse.Config{Text: true, Raw: true}},
			func(e *schema.Entry) {
				c := *e
				c.ToolCalls = append([]schema.ToolCall(nil), e.ToolCalls...)
				c.ToolResults = append([]schema.ToolResult(nil), e.ToolResults...)
				entries = append(entries, c)
			}, func(error) {})
		if errors.Is(err, formats.ErrUnknownFormat) {
			return nil
		}
		return err
	})
	require.NoError(tb, err)
	require.NotEmpty(tb, entries)
	return entries
}

// fixture is a benchmark's input: texts, JSON values, or entries.
type fixture struct {
	texts   []string
	jsons   [][]byte
	entries []schema.Entry
	bytes   int64
}

var (
	fixturesOnce sync.Once
	fixtures     map[string]*fixture
)

// loadFixtures builds, once: the shipped samples' and a generated
// corpus's texts (message text and tool result contents), tool inputs,
// raw lines and entries; and the same shapes holding fake secrets.
func loadFixtures(b *testing.B) map[string]*fixture {
	fixturesOnce.Do(func() {
		fixtures = map[string]*fixture{}
		for name, dir := range map[string]string{
			"samples":   corpusDir,
			"corpusgen": testcorpus.Generate(b, 16<<20, 1),
		} {
			entries := readEntries(b, dir)
			text, inputs, raw := &fixture{}, &fixture{}, &fixture{}
			all := &fixture{entries: entries}
			for _, e := range entries {
				for _, s := range append([]string{e.Text}, contents(e.ToolResults)...) {
					if s != "" {
						text.texts = append(text.texts, s)
						text.bytes += int64(len(s))
					}
				}
				for _, c := range e.ToolCalls {
					if len(c.Input) > 0 {
						inputs.jsons = append(inputs.jsons, c.Input)
						inputs.bytes += int64(len(c.Input))
					}
				}
				raw.jsons = append(raw.jsons, e.Raw)
				raw.bytes += int64(len(e.Raw))
				all.bytes += int64(len(e.Raw))
			}
			fixtures["text/"+name] = text
			fixtures["toolInput/"+name] = inputs
			fixtures["rawLine/"+name] = raw
			fixtures["entry/"+name] = all
			// As the tailer runs by default: text on, raw lines not kept.
			noRaw := &fixture{}
			for _, e := range entries {
				e.Raw = nil
				noRaw.entries = append(noRaw.entries, e)
				noRaw.bytes += int64(len(e.Text))
				for _, c := range e.ToolCalls {
					noRaw.bytes += int64(len(c.Input))
				}
				for _, r := range e.ToolResults {
					noRaw.bytes += int64(len(r.Content))
				}
			}
			fixtures["entryNoRaw/"+name] = noRaw
		}
		// Fakes: every kind in every text and JSON context.
		text, js := &fixture{}, &fixture{}
		for seed := range uint64(4) {
			for _, f := range newFaker(seed).all() {
				for _, c := range contexts {
					doc := c.wrap(f.Text)
					if c.json {
						js.jsons = append(js.jsons, []byte(doc))
						js.bytes += int64(len(doc))
					} else {
						text.texts = append(text.texts, doc)
						text.bytes += int64(len(doc))
					}
				}
			}
		}
		fixtures["text/secrets"] = text
		fixtures["toolInput/secrets"] = js
	})
	return fixtures
}

func contents(rs []schema.ToolResult) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Content
	}
	return out
}

// BenchmarkRedactor measures String on texts, JSON on tool inputs and raw
// lines, and Entry on whole entries (redacted mode; entry: text and raw
// lines kept, SetBytes counting the raw lines; entryNoRaw: text kept and
// no raw line, as the tailer runs by default, SetBytes counting the text
// fields), on the shipped samples, a generated corpus and fake secrets.
func BenchmarkRedactor(b *testing.B) {
	fx := loadFixtures(b)
	r := mustNew(b, redact.Config{})
	for _, name := range []string{"text/samples", "text/corpusgen", "text/secrets"} {
		f := fx[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(f.bytes)
			var st redact.Stats
			start := cpuTime()
			for b.Loop() {
				for _, s := range f.texts {
					r.String(s, &st)
				}
			}
			b.ReportMetric(float64(f.bytes)*float64(b.N)/(cpuTime()-start).Seconds()/1e6, "MB/cpu-s")
			b.ReportMetric(float64(len(f.texts)), "texts/op")
		})
	}
	for _, name := range []string{"toolInput/samples", "toolInput/corpusgen", "toolInput/secrets", "rawLine/samples", "rawLine/corpusgen"} {
		f := fx[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(f.bytes)
			var st redact.Stats
			start := cpuTime()
			for b.Loop() {
				for _, j := range f.jsons {
					r.JSON(j, &st)
				}
			}
			b.ReportMetric(float64(f.bytes)*float64(b.N)/(cpuTime()-start).Seconds()/1e6, "MB/cpu-s")
			b.ReportMetric(float64(len(f.jsons)), "values/op")
		})
	}
	for _, name := range []string{"entry/samples", "entry/corpusgen", "entryNoRaw/samples", "entryNoRaw/corpusgen"} {
		f := fx[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(f.bytes)
			entries := make([]schema.Entry, len(f.entries))
			var cpu time.Duration
			for b.Loop() {
				copy(entries, f.entries)
				start := cpuTime()
				for i := range entries {
					r.Entry(&entries[i])
				}
				cpu += cpuTime() - start
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(entries)), "ns/entry")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(len(entries)), "cpu-ns/entry")
			b.ReportMetric(float64(f.bytes)*float64(b.N)/cpu.Seconds()/1e6, "MB/cpu-s")
		})
	}
}

// BenchmarkRedactor_Prefilter measures text without any anchor: the cost
// of the prefilter alone.
func BenchmarkRedactor_Prefilter(b *testing.B) {
	r := mustNew(b, redact.Config{})
	for _, size := range []int{256, 4096, 65536} {
		s := strings.Repeat("the quick brown fox jumps over the lazy dog 0123456789. ", size/56+1)[:size]
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			start := cpuTime()
			for b.Loop() {
				r.String(s, nil)
			}
			b.ReportMetric(float64(size)*float64(b.N)/(cpuTime()-start).Seconds()/1e6, "MB/cpu-s")
		})
		// The floor: one memchr-like pass over the same bytes, under the
		// same load.
		b.Run(fmt.Sprintf("size=%d/indexByte", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			start := cpuTime()
			for b.Loop() {
				if strings.IndexByte(s, 0) >= 0 {
					b.Fatal("found")
				}
			}
			b.ReportMetric(float64(size)*float64(b.N)/(cpuTime()-start).Seconds()/1e6, "MB/cpu-s")
		})
	}
}

// cpuTime returns the CPU time the process used so far (user and system),
// which a loaded machine's waiting does not inflate as it does wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
