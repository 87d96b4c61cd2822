package alert

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// loadWithin runs Load(path), failing the test if it has not returned
// within 10 s.
func loadWithin(t *testing.T, path string) ([]Rule, error) {
	t.Helper()
	type result struct {
		rules []Rule
		err   error
	}
	done := make(chan result, 1)
	go func() {
		rules, err := Load(path)
		done <- result{rules, err}
	}()
	select {
	case r := <-done:
		return r.rules, r.err
	case <-time.After(10 * time.Second):
		t.Fatalf("Load(%q) does not return", path)
		return nil, nil
	}
}

func TestLoad_RefusesDirectories(t *testing.T) {
	_, err := loadWithin(t, t.TempDir())
	require.ErrorIs(t, err, ErrRulesFile)
	require.ErrorContains(t, err, "not a regular file")
}

// A file past MaxRulesBytes is refused, with an error naming the limit.
func TestLoad_TooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	big := "rules:\n" + strings.Repeat("# padding\n", MaxRulesBytes/10)
	require.Greater(t, len(big), MaxRulesBytes)
	require.NoError(t, os.WriteFile(path, []byte(big), 0o600))
	_, err := loadWithin(t, path)
	require.ErrorIs(t, err, ErrRulesFile)
	require.ErrorContains(t, err, "past the limit of 4194304 (4 MiB)")

	require.NoError(t, os.WriteFile(path, []byte(big[:MaxRulesBytes]), 0o600))
	rules, err := loadWithin(t, path)
	require.NoError(t, err, "a file of exactly the limit is read")
	require.Empty(t, rules)
}

// LoadContext returns when its context ends, even while the read hangs.
func TestLoadContext_ReturnsWhenCanceled(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(release) })
	hang := func(string) ([]byte, error) {
		close(started)
		<-release
		return nil, nil
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := load(ctx, "rules.yaml", hang)
		done <- err
	}()
	<-started
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("LoadContext does not return once its context ended")
	}
}
