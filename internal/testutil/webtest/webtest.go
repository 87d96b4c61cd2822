// Package webtest holds the HTTP helpers of the daemons' tests: a GET
// that returns status and body, and a wait for an answer.
package webtest

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
)

// Get GETs url and returns the status and body.
func Get(tb testing.TB, url string) (int, string) {
	tb.Helper()
	req, err := http.NewRequestWithContext(tb.Context(), http.MethodGet, url, nil)
	require.NoError(tb, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(tb, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(tb, err)
	return resp.StatusCode, string(body)
}

// WaitFor waits (up to 30 s, generous for a loaded machine) until url
// answers code with a body holding want.
func WaitFor(tb testing.TB, url string, code int, want string) {
	tb.Helper()
	natstest.CheckFor(tb, 30*time.Second, 10*time.Millisecond, func() error {
		if c, body := Get(tb, url); c != code || !strings.Contains(body, want) {
			return fmt.Errorf("%d %q, want %d %q", c, body, code, want)
		}
		return nil
	})
}
