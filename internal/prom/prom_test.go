package prom

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWriter_Family(t *testing.T) {
	var sb strings.Builder
	w := NewWriter(&sb)
	w.Int("sessionpipe_x_total", Counter, "Things.", 42)
	w.Family("sessionpipe_tail_watch_files", Gauge, "Files each watch follows.\nOne per watch.",
		Sample{Labels: []Label{{"watch", `/home/a "b"\c` + "\n"}}, Value: 3},
		Sample{Labels: []Label{{"watch", "/a"}}, Value: 1.5},
	)
	w.Family("sessionpipe_y", Gauge, "Odd values.", Sample{Value: math.Inf(1)}, Sample{Labels: []Label{{"k", "v"}}, Value: 1e300})
	require.NoError(t, w.Err())
	require.Equal(t, `# HELP sessionpipe_x_total Things.
# TYPE sessionpipe_x_total counter
sessionpipe_x_total 42
# HELP sessionpipe_tail_watch_files Files each watch follows.\nOne per watch.
# TYPE sessionpipe_tail_watch_files gauge
sessionpipe_tail_watch_files{watch="/a"} 1.5
sessionpipe_tail_watch_files{watch="/home/a \"b\"\\c\n"} 3
# HELP sessionpipe_y Odd values.
# TYPE sessionpipe_y gauge
sessionpipe_y +Inf
sessionpipe_y{k="v"} 1e+300
`, sb.String())
	require.Equal(t, int64(sb.Len()), w.Written())
}

type failing struct{ n int }

func (f *failing) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("closed")
	}
	f.n--
	return len(p), nil
}

func TestWriter_StickyError(t *testing.T) {
	w := NewWriter(&failing{n: 1})
	w.Int("a", Counter, "a", 1)
	w.Int("b", Counter, "b", 1)
	w.Int("c", Counter, "c", 1)
	require.EqualError(t, w.Err(), "closed")
}
