package tail

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
)

// histogramOf returns the sample count and sum of the histogram name in
// reg, an error while it has none.
func histogramOf(reg prometheus.Gatherer, name string) (uint64, float64, error) {
	mfs, err := reg.Gather()
	if err != nil {
		return 0, 0, err
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			h := mf.GetMetric()[0].GetHistogram()
			return h.GetSampleCount(), h.GetSampleSum(), nil
		}
	}
	return 0, 0, errors.New("no " + name)
}

// Every message acknowledged is one observation of the read→acknowledged
// latency, on the registry the config names, lines appended later too.
func TestTailer_PublishLatency(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := newHarness(t)
	path := h.write("s1.jsonl", piFile("s1", 0, 20))
	h.start(func(c *Config) { c.Registry = reg })
	h.waitMsgs(21)
	check := func() {
		t.Helper()
		natstest.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
			n, sum, err := histogramOf(reg, "sessionpipe_tail_publish_latency_seconds")
			if err != nil {
				return err
			}
			acked := h.tl.Metrics().Snapshot().Acked
			if acked == 0 || n != uint64(acked) {
				return fmt.Errorf("%d observations, %d messages acknowledged", n, acked)
			}
			require.Greater(t, sum, 0.0)
			require.Less(t, sum/float64(n), 30.0, "seconds from read to acknowledgement, on average")
			return nil
		})
	}
	check()
	before := h.tl.Metrics().Snapshot().Acked
	h.appendTo(path, piLine(21))
	natstest.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		if h.tl.Metrics().Snapshot().Acked == before {
			return errors.New("the appended line is not acknowledged")
		}
		return nil
	})
	check()

	// The same registry cannot take a second tailer's metrics.
	_, err := New(Config{Watch: []string{h.dir}, StateDir: t.TempDir(), Host: "h", Publisher: h.tl.cfg.Publisher, Registry: reg})
	require.ErrorContains(t, err, "register the tailer's metrics")

	// Metrics.WriteTo renders the tailer's families, the histogram too.
	var b strings.Builder
	_, err = h.tl.Metrics().WriteTo(&b)
	require.NoError(t, err)
	require.Contains(t, b.String(), "\nsessionpipe_tail_publish_latency_seconds_count ")
	require.Contains(t, b.String(), "\nsessionpipe_tail_lines_read_total 22\n")
}
