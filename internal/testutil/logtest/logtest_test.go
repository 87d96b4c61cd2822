package logtest_test

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/logtest"
)

// Writers and a reader at once: run with -race.
func TestBuffer_Concurrent(t *testing.T) {
	var buf logtest.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				log.Info("event", "writer", i, "n", j)
				_ = buf.String()
			}
		})
	}
	wg.Wait()
	out := buf.String()
	require.Equal(t, 800, strings.Count(out, "msg=event"))
	for i := range 8 {
		require.Contains(t, out, fmt.Sprintf("writer=%d n=99", i))
	}
}
