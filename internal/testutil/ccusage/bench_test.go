//go:build linux

package ccusage

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var benchMB = flag.Int("ccusage.mb", 200, "size in MB of the Claude corpus BenchmarkRun builds")

// Message and request ids in Claude Code lines, which copies must change
// to stay distinct responses.
var (
	msgIDRe = regexp.MustCompile(`"id":"msg_`)
	reqIDRe = regexp.MustCompile(`"requestId":"`)
)

// buildClaudeCorpus writes copies of the Claude corpus under root as
// projects/<dir>-<k>/<stem>-<k>.jsonl (subagents under <session>-<k>/)
// until it holds at least size bytes. With unique, copy k prefixes message
// and request ids with "k<k>_" so no copy dedupes against another;
// otherwise every copy repeats the same responses and ccusage counts each
// once. It returns the bytes written.
func buildClaudeCorpus(tb testing.TB, root string, size int64, unique bool) int64 {
	tb.Helper()
	src := filepath.Join(corpusDir, "claude-code")
	files := corpusFiles(tb, "claude-code")
	var total int64
	for k := 0; total < size; k++ {
		tag := fmt.Sprintf("k%d_", k)
		for _, f := range files {
			data, err := os.ReadFile(f)
			require.NoError(tb, err)
			rel, err := filepath.Rel(src, f)
			require.NoError(tb, err)
			parts := strings.Split(filepath.ToSlash(rel), "/")
			name := parts[len(parts)-1]
			var dest string
			if len(parts) >= 3 && parts[len(parts)-2] == "subagents" {
				dest = filepath.Join(root, "projects", fmt.Sprintf("%s-%d", parts[0], k), fmt.Sprintf("%s-%d", parts[len(parts)-3], k), "subagents", name)
			} else {
				dest = filepath.Join(root, "projects", fmt.Sprintf("%s-%d", parts[0], k), fmt.Sprintf("%s-%d.jsonl", strings.TrimSuffix(name, ".jsonl"), k))
			}
			if unique {
				data = msgIDRe.ReplaceAll(data, []byte(`"id":"msg_`+tag))
				data = reqIDRe.ReplaceAll(data, []byte(`"requestId":"`+tag))
			}
			require.NoError(tb, os.MkdirAll(filepath.Dir(dest), 0o755))
			require.NoError(tb, os.WriteFile(dest, data, 0o644))
			total += int64(len(data))
		}
	}
	return total
}

// BenchmarkRun times ccusage on a Claude corpus of -ccusage.mb megabytes
// (default 200) built from copies of testdata/corpus/claude-code, with
// copies that dedupe (verbatim) or not (unique). Besides ns/op and MB/s
// (wall clock, which other load on the machine inflates), it reports the
// CPU time ccusage used (cpu-s/op, and MB/cpu-s) and its peak RSS. The
// commands: "ccusage session --json --offline" (unified report), Args(Claude)
// and Args(Claude) with --single-thread.
//
//	go test -run '^$' -bench Run -benchtime 3x ./internal/ccusage
func BenchmarkRun(b *testing.B) {
	bin := Binary(b)
	for _, unique := range []bool{false, true} {
		root := b.TempDir()
		size := buildClaudeCorpus(b, root, int64(*benchMB)<<20, unique)
		name := map[bool]string{false: "verbatim", true: "unique"}[unique]
		for _, c := range []struct {
			name string
			args []string
		}{
			{"unified", []string{"session", "--json", "--offline"}},
			{"claude", Args(Claude)},
			{"claude-single-thread", append(Args(Claude), "--single-thread")},
		} {
			args := c.args
			b.Run(fmt.Sprintf("copies=%s/cmd=%s", name, c.name), func(b *testing.B) {
				env, err := Env(Claude, root, b.TempDir())
				require.NoError(b, err)
				b.ReportAllocs()
				b.SetBytes(size)
				var cpu time.Duration
				var peakKB int64
				runs := 0
				for b.Loop() {
					var stdout, stderr bytes.Buffer
					cmd := exec.CommandContext(b.Context(), bin, args...)
					cmd.Env, cmd.Dir = env, b.TempDir()
					cmd.Stdout, cmd.Stderr = &stdout, &stderr
					require.NoError(b, cmd.Run(), "stderr: %s", stderr.Bytes())
					ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
					cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
					peakKB = max(peakKB, ru.Maxrss)
					runs++
					require.Contains(b, stdout.String(), `"totals"`)
				}
				cpuS := cpu.Seconds() / float64(runs)
				b.ReportMetric(cpuS, "cpu-s/op")
				b.ReportMetric(float64(size)/(1<<20)/cpuS, "MB/cpu-s")
				b.ReportMetric(float64(peakKB)/1024, "peak-RSS-MB")
			})
		}
	}
}
