package bus_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/logtest"
	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
)

// logBuffer is a concurrency-safe log sink.
type logBuffer = logtest.Buffer

// waitLog waits until the log b holds s.
func waitLog(tb testing.TB, b *logBuffer, s string) {
	tb.Helper()
	natstest.CheckFor(tb, 10*time.Second, 5*time.Millisecond, func() error {
		if !strings.Contains(b.String(), s) {
			return errors.New("log has no " + s)
		}
		return nil
	})
}

func newLogger(b *logBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func TestConnect_SetsReconnectOptions(t *testing.T) {
	srv := natstest.RunServer(t)
	nc, err := bus.Connect(t.Context(), bus.ConnConfig{URL: srv.URL(), Name: "tailer-1"})
	require.NoError(t, err)
	defer nc.Close()

	assert.True(t, nc.IsConnected())
	assert.Equal(t, "tailer-1", nc.Opts.Name)
	assert.Equal(t, -1, nc.Opts.MaxReconnect)
	assert.Equal(t, -1, nc.Opts.ReconnectBufSize)
	_, err = bus.NewPublisher(natstest.JetStream(t, nc), bus.PublisherConfig{})
	require.NoError(t, err, "a bus connection is fit for a publisher")
}

func TestConnect_WaitsForServer(t *testing.T) {
	srv := natstest.RunServer(t)
	srv.Stop()
	var logs logBuffer
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()

	type result struct{ err error }
	done := make(chan result, 1)
	go func() {
		nc, err := bus.Connect(ctx, bus.ConnConfig{URL: srv.URL(), ReconnectWait: 10 * time.Millisecond, MaxReconnectWait: 50 * time.Millisecond, Logger: newLogger(&logs)})
		if err == nil {
			defer nc.Close()
			if !nc.IsConnected() {
				err = errors.New("returned unconnected")
			}
		}
		done <- result{err}
	}()
	waitLog(t, &logs, "nats reconnect failed")
	srv.Start(t)
	require.NoError(t, (<-done).err)
}

func TestConnect_ContextEnds(t *testing.T) {
	srv := natstest.RunServer(t)
	srv.Stop()
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := bus.Connect(ctx, bus.ConnConfig{URL: srv.URL(), ReconnectWait: 10 * time.Millisecond})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "connection refused", "the error says why no server answered")
	assert.Less(t, time.Since(start), 5*time.Second)
}

func TestConnect_LogsDisconnectAndReconnect(t *testing.T) {
	srv := natstest.RunServer(t)
	var logs logBuffer
	nc, err := bus.Connect(t.Context(), bus.ConnConfig{URL: srv.URL(), ReconnectWait: 10 * time.Millisecond, Logger: newLogger(&logs)})
	require.NoError(t, err)
	srv.Restart(t)
	waitLog(t, &logs, "nats disconnected")
	waitLog(t, &logs, "nats reconnected")
	nc.Close()
	waitLog(t, &logs, "nats connection closed")
	assert.Contains(t, logs.String(), "component=bus.conn")
}

func TestConnect_BadFiles(t *testing.T) {
	srv := natstest.RunServer(t)
	missing := filepath.Join(t.TempDir(), "missing")
	notPEM := filepath.Join(t.TempDir(), "bad.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate"), 0o600))
	tests := []struct {
		name string
		cfg  bus.ConnConfig
	}{
		{"CredsMissing", bus.ConnConfig{URL: srv.URL(), CredsFile: missing}},
		{"CertMissing", bus.ConnConfig{URL: srv.URL(), TLSCert: missing, TLSKey: missing}},
		{"CABad", bus.ConnConfig{URL: srv.URL(), TLSCA: notPEM}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			nc, err := bus.Connect(ctx, tt.cfg)
			if nc != nil {
				nc.Close()
			}
			require.Error(t, err)
			require.NotErrorIs(t, err, context.DeadlineExceeded, "must fail at once, not retry")
		})
	}
}

func TestConnConfig_Validate(t *testing.T) {
	tests := []struct {
		name  string
		cfg   bus.ConnConfig
		field string
	}{
		{"Zero", bus.ConnConfig{}, ""},
		{"TLSPair", bus.ConnConfig{TLSCert: "c", TLSKey: "k", TLSCA: "ca"}, ""},
		{"CertWithoutKey", bus.ConnConfig{TLSCert: "c"}, "tls_cert"},
		{"KeyWithoutCert", bus.ConnConfig{TLSKey: "k"}, "tls_cert"},
		{"NegativeWait", bus.ConnConfig{ReconnectWait: -1}, "reconnect_wait"},
		{"NegativeMaxWait", bus.ConnConfig{MaxReconnectWait: -1}, "max_reconnect_wait"},
		{"WaitOverMax", bus.ConnConfig{ReconnectWait: time.Minute, MaxReconnectWait: time.Second}, "reconnect_wait"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireConfigError(t, tt.cfg.Validate(), tt.field)
		})
	}
}
