package bus

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/sessionpipe/sessionpipe/pipeline/dirlock"
)

// Embedded server defaults.
const (
	// DefaultEmbeddedHost is the interface the embedded server listens on:
	// loopback only, since laptop mode has no authentication.
	DefaultEmbeddedHost = "127.0.0.1"

	// DefaultEmbeddedPort is the client port an embedded server is given
	// by the commands: NATS's standard port, so that the nats CLI and
	// other daemons find it without being told. [EmbeddedConfig].Port 0
	// or -1 picks a random free port instead (tests, a second server).
	DefaultEmbeddedPort = 4222

	// randomPort asks the server for any free port.
	randomPort = -1

	// DefaultEmbeddedName is the embedded server's name.
	DefaultEmbeddedName = "sessionpipe"

	// EmbeddedMaxPayload is the embedded server's largest message: 8 MiB,
	// NATS's recommended ceiling, since a transcript line (a tool result
	// with an image) can exceed the 1 MiB default.
	EmbeddedMaxPayload = 8 << 20

	// DefaultEmbeddedSyncInterval is how often the embedded server's
	// JetStream file store fsyncs what it wrote, unless told otherwise:
	// nats-server's own default.
	DefaultEmbeddedSyncInterval = 2 * time.Minute

	// shutdownFlushTimeout bounds the final flush when Shutdown's context
	// has no deadline.
	shutdownFlushTimeout = 5 * time.Second
)

// EmbeddedConfig configures [StartEmbedded].
type EmbeddedConfig struct {
	// StoreDir holds the JetStream state; required. It is created if
	// missing, and a server started again on the same directory finds its
	// streams and messages there. The server owns it while it runs: a
	// second server on the same directory, in this process or another,
	// fails to start (two servers on one store corrupt it).
	StoreDir string

	// Host is the listen address. Default [DefaultEmbeddedHost].
	Host string

	// Port is the client port; 0 or -1 picks a random free port (the
	// default); the commands pass [DefaultEmbeddedPort].
	Port int

	// ServerName is the server's name. Default [DefaultEmbeddedName].
	ServerName string

	// SyncInterval is how often the JetStream file store fsyncs what it
	// wrote. Default [DefaultEmbeddedSyncInterval]. A message is
	// acknowledged once the server wrote it to the operating system: a
	// crash of this process loses nothing acknowledged, but a power
	// failure or a kernel crash can lose what was acknowledged since the
	// last sync (Jepsen's JetStream findings). Ignored with SyncAlways.
	SyncInterval time.Duration

	// SyncAlways fsyncs every write before the message is acknowledged
	// (nats-server's sync_interval: always): an acknowledged message
	// survives power failure too, at the cost benchmarks/RESULTS.md
	// measures (BenchmarkEmbedded_Publish).
	SyncAlways bool

	// Logger receives the server's warnings and errors (its notices at
	// Debug). Nil discards them.
	Logger *slog.Logger
}

// Validate reports the first invalid field as a *[ConfigError].
func (c EmbeddedConfig) Validate() error {
	switch {
	case c.StoreDir == "":
		return invalid("store_dir", c.StoreDir, "required")
	case c.Port < -1 || c.Port > 65535:
		return invalid("port", c.Port, "must be -1 (random) or 0 to 65535")
	case c.SyncInterval < 0:
		return invalid("sync_interval", c.SyncInterval, "must not be negative")
	}
	return nil
}

// Embedded is an in-process nats-server with JetStream, for laptop mode:
// `sessionpipe run` needs nothing installed. Its methods are safe for
// concurrent use.
type Embedded struct {
	srv  *server.Server
	nc   *nats.Conn
	log  *slog.Logger
	lock *dirlock.Lock
}

// StartEmbedded starts a nats-server with JetStream in this process and an
// in-process client connection to it. It returns once the server accepts
// clients, or fails with [ErrServerStart] (port taken, store directory
// unusable, JetStream refused) or context.Cause(ctx) if ctx ends first;
// the server is then shut down again. Recovering a large store happens
// before it accepts clients and may take a while.
//
// A store directory held by another running server fails at once with an
// error wrapping [dirlock.ErrHeld] (a *dirlock.HeldError naming the
// process), before anything in it is touched.
func StartEmbedded(ctx context.Context, cfg EmbeddedConfig) (*Embedded, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Host == "" {
		cfg.Host = DefaultEmbeddedHost
	}
	if cfg.Port == 0 {
		cfg.Port = randomPort
	}
	if cfg.ServerName == "" {
		cfg.ServerName = DefaultEmbeddedName
	}
	if cfg.SyncInterval == 0 {
		cfg.SyncInterval = DefaultEmbeddedSyncInterval
	}
	log := discard(cfg.Logger).With(KeyComponent, "bus.embedded")
	lock, err := dirlock.Acquire(cfg.StoreDir, "embedded JetStream store")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrServerStart, err)
	}
	e, err := startEmbedded(ctx, cfg, log)
	if err != nil {
		lock.Release()
		return nil, err
	}
	e.lock = lock
	return e, nil
}

func startEmbedded(ctx context.Context, cfg EmbeddedConfig, log *slog.Logger) (*Embedded, error) {
	srv, err := server.NewServer(&server.Options{
		ServerName: cfg.ServerName,
		Host:       cfg.Host,
		Port:       cfg.Port,
		JetStream:  true,
		StoreDir:   cfg.StoreDir,
		MaxPayload: EmbeddedMaxPayload,
		NoSigs:     true,
		// With SyncAlways the server keeps its interval for the
		// background sync of what is not yet synced (its index files).
		SyncInterval: cfg.SyncInterval,
		SyncAlways:   cfg.SyncAlways,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrServerStart, err)
	}
	sl := &serverLogger{log: log}
	srv.SetLoggerV2(sl, false, false, false)
	srv.Start()
	if err := waitReady(ctx, srv, sl); err != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, err
	}
	opts := connOptions(cfg.ServerName+"-embedded", 0, 0, cfg.Logger, nil)
	opts = append(opts, nats.InProcessServer(srv))
	nc, err := nats.Connect(srv.ClientURL(), opts...)
	if err != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, fmt.Errorf("%w: connect in process: %w", ErrServerStart, err)
	}
	log.Info("embedded nats started", KeyURL, srv.ClientURL(), "store_dir", cfg.StoreDir, "sync", syncString(cfg.SyncInterval, cfg.SyncAlways))
	return &Embedded{srv: srv, nc: nc, log: log}, nil
}

// waitReady waits until srv accepts clients, a fatal error is logged, or
// ctx ends.
func waitReady(ctx context.Context, srv *server.Server, sl *serverLogger) error {
	for {
		if msg := sl.fatal.Load(); msg != nil {
			return fmt.Errorf("%w: %s", ErrServerStart, *msg)
		}
		if srv.ReadyForConnections(50 * time.Millisecond) {
			if msg := sl.fatal.Load(); msg != nil {
				return fmt.Errorf("%w: %s", ErrServerStart, *msg)
			}
			return nil
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
	}
}

// Conn returns the in-process client connection. It is owned by e and
// closed by [Embedded.Shutdown]; it does not buffer publishes while
// reconnecting, as [Publisher] requires.
func (e *Embedded) Conn() *nats.Conn { return e.nc }

// ClientURL returns the URL other processes (the nats CLI, a second
// sessionpipe daemon) connect to, e.g. nats://127.0.0.1:41523.
func (e *Embedded) ClientURL() string { return e.srv.ClientURL() }

// Sync reports how the running server's JetStream file store syncs to
// disk, as the server itself reports it (its JetStream configuration):
// every write before it is acknowledged (always), or every interval.
func (e *Embedded) Sync() (interval time.Duration, always bool) {
	c := e.srv.JetStreamConfig()
	if c == nil { // JetStream stopped: the server is shutting down
		return 0, false
	}
	return c.SyncInterval, c.SyncAlways
}

// syncString renders a sync setting as nats-server's sync_interval does:
// "always" or a duration.
func syncString(interval time.Duration, always bool) string {
	if always {
		return "always"
	}
	return interval.String()
}

// Shutdown closes the in-process connection, after flushing what it still
// buffers, and stops the server, which syncs the JetStream store to disk.
// If ctx ends first it returns context.Cause(ctx) while the server goes on
// stopping in the background.
func (e *Embedded) Shutdown(ctx context.Context) error {
	var first error
	if !e.nc.IsClosed() {
		fctx, cancel := ctx, context.CancelFunc(func() {})
		if _, ok := ctx.Deadline(); !ok {
			fctx, cancel = context.WithTimeout(ctx, shutdownFlushTimeout)
		}
		if err := e.nc.FlushWithContext(fctx); err != nil && e.nc.IsConnected() {
			first = fmt.Errorf("flush embedded connection: %w", err)
		}
		cancel()
		e.nc.Close()
	}
	done := make(chan struct{})
	go func() {
		// JetStream first (the store synced and closed as Shutdown would):
		// Shutdown otherwise tells the pull requests the stopped consumers
		// left pending that they are void and sleeps 50 ms for the news to
		// go out, to the in-process connection already closed and to
		// clients about to lose theirs.
		if err := e.srv.ShutdownJetStream(); err != nil {
			e.log.Warn("stopping JetStream", KeyError, err)
		}
		e.srv.Shutdown()
		e.srv.WaitForShutdown()
		// Only a stopped server gives the store up.
		if err := e.lock.Release(); err != nil {
			e.log.Warn("releasing the store lock", KeyError, err)
		}
		close(done)
	}()
	select {
	case <-done:
		e.log.Info("embedded nats stopped")
	case <-ctx.Done():
		if first == nil {
			first = context.Cause(ctx)
		}
	}
	return first
}

// serverLogger turns nats-server's logger calls into slog records and
// remembers a fatal error so that StartEmbedded can return it instead of
// the process exiting.
type serverLogger struct {
	log   *slog.Logger
	fatal atomic.Pointer[string]
}

// Noticef logs at Debug: the server's start-up banner is noise for a CLI.
func (l *serverLogger) Noticef(format string, v ...any) { l.log.Debug(fmt.Sprintf(format, v...)) }

// Warnf logs at Warn.
func (l *serverLogger) Warnf(format string, v ...any) { l.log.Warn(fmt.Sprintf(format, v...)) }

// Fatalf logs at Error and records the message.
func (l *serverLogger) Fatalf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	l.fatal.CompareAndSwap(nil, &msg)
	l.log.Error(msg)
}

// Errorf logs at Error.
func (l *serverLogger) Errorf(format string, v ...any) { l.log.Error(fmt.Sprintf(format, v...)) }

// Debugf logs at Debug.
func (l *serverLogger) Debugf(format string, v ...any) { l.log.Debug(fmt.Sprintf(format, v...)) }

// Tracef logs at Debug.
func (l *serverLogger) Tracef(format string, v ...any) { l.log.Debug(fmt.Sprintf(format, v...)) }
