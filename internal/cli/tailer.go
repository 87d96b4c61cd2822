package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/discover"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/redact"
	"github.com/sessionpipe/sessionpipe/pipeline/tail"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Tailer holds the tailer's flags.
type Tailer struct {
	Host         string
	Watch        globList
	FromStart    bool
	FromEnd      bool
	NoText       bool
	Raw          bool
	MaxLineBytes int
	MaxOpenFiles int
	Rescan       time.Duration
	Poll         bool
	Metrics      string
	Drain        time.Duration
	StateDir     string
	// Static: the files present at start are complete (run -once), so a
	// file that tells no format is skipped at once (tail.Config.Static).
	Static bool
	// Content is what of the transcripts' text leaves the host.
	Content    redact.Mode
	contentErr error
	// Archive publishes the original lines for the exporter's archive.
	Archive bool
	// Labels are attached to every entry (tail.Config.Labels).
	Labels labelList
	// Registry, when set, receives the tailer's and its publisher's
	// metrics, served on -metrics; nil: a new [NewRegistry].
	Registry *prometheus.Registry
}

// ContentErr is the error of a SESSIONPIPE_CONTENT that is no mode, seen
// by Register and returned when the tailer starts; nil when none.
func (t *Tailer) ContentErr() error { return t.contentErr }

// LabelsErr is the error of a SESSIONPIPE_LABELS that is no list of
// labels, seen by Register and returned when the tailer starts; nil when
// none.
func (t *Tailer) LabelsErr() error { return t.Labels.err }

// labelList is the repeatable -label flag: key=value pairs, several in
// one value when separated by commas (schema.ParseLabels). The labels of
// SESSIONPIPE_LABELS are its default, replaced as a whole by the first
// -label given; a bad SESSIONPIPE_LABELS is reported when the tailer
// starts, and a bad -label by the flag parsing.
type labelList struct {
	m       map[string]string
	fromEnv bool
	err     error
}

func (l *labelList) String() string {
	keys := slices.Sorted(maps.Keys(l.m))
	for i, k := range keys {
		keys[i] = k + "=" + l.m[k]
	}
	return strings.Join(keys, ",")
}

func (l *labelList) Set(v string) error {
	if l.fromEnv || l.m == nil {
		*l = labelList{m: make(map[string]string)}
	}
	return schema.ParseLabels(l.m, v)
}

// setEnv sets the default from the value of SESSIONPIPE_LABELS.
func (l *labelList) setEnv(v string) {
	if strings.TrimSpace(v) == "" {
		return
	}
	*l = labelList{m: make(map[string]string), fromEnv: true}
	if err := schema.ParseLabels(l.m, v); err != nil {
		l.err = fmt.Errorf("SESSIONPIPE_LABELS: %w", err)
	}
}

// globList is a repeatable flag.
type globList []string

func (g *globList) String() string     { return strings.Join(*g, ",") }
func (g *globList) Set(v string) error { *g = append(*g, v); return nil }

// Register adds the tailer flags to fs.
func (t *Tailer) Register(fs *flag.FlagSet, env Env) {
	fs.StringVar(&t.Host, "host", env("SESSIONPIPE_HOST"), "host name in entries and subjects (env SESSIONPIPE_HOST; default: the machine's)")
	fs.Var(&t.Watch, "watch", "file, directory (everything under it) or glob to follow, repeatable (\"**\" for any depth; default: the well-known locations of every agent under $HOME)")
	t.Labels.setEnv(env("SESSIONPIPE_LABELS"))
	fs.Var(&t.Labels, "label", fmt.Sprintf("key=value label attached to every entry of this host, repeatable or comma-separated (e.g. -label team=infra -label cost_centre=42), "+
		"for usage and alerts by label; keys of a-z, 0-9, '_', '.', '-'; at most %d labels (env SESSIONPIPE_LABELS=\"team=infra,cost_centre=42\", replaced by -label)", schema.MaxLabels))
	fs.BoolVar(&t.FromStart, "from-start", false, "read files seen for the first time from their start (the default)")
	fs.BoolVar(&t.FromEnd, "from-end", false, "read files seen for the first time from their end: only new lines")
	fs.BoolVar(&t.NoText, "no-text", false, "leave message text, tool inputs and results out of entries")
	if v := env("SESSIONPIPE_CONTENT"); v != "" {
		// A bad value is reported when the tailer starts.
		if err := t.Content.Set(v); err != nil {
			t.contentErr = fmt.Errorf("SESSIONPIPE_CONTENT: %w", err)
		}
	}
	fs.Var(&t.Content, "content", "what of the text leaves the host: full, redacted (secrets such as API keys, tokens, private keys and passwords replaced by [REDACTED:<kind>]) or metadata (no text at all, only numbers and names) (env SESSIONPIPE_CONTENT)")
	fs.BoolVar(&t.Archive, "archive", envBool(env("SESSIONPIPE_ARCHIVE"), true), "publish the original lines too (redacted as -content says; not in metadata mode), for the exporter's byte-exact archive (env SESSIONPIPE_ARCHIVE)")
	fs.BoolVar(&t.Raw, "raw", false, "include each record's original JSON in its entry")
	fs.IntVar(&t.MaxLineBytes, "max-line-bytes", 0, "longest line read; longer ones go to the dead-letter subject (default 128 MiB)")
	fs.IntVar(&t.MaxOpenFiles, "max-open-files", tail.DefaultMaxOpenFiles, "open file handles at most")
	fs.DurationVar(&t.Rescan, "rescan", tail.DefaultRescanInterval, "full rescan period (catches missed notifications)")
	fs.BoolVar(&t.Poll, "poll", false, "no file notifications: find changes by the rescans alone (network file systems, inotify limits); lower -rescan with it")
	fs.StringVar(&t.Metrics, "metrics", "127.0.0.1:0", "address of the /metrics endpoint (port 0: any free port, printed at start; empty: no endpoint)")
	fs.DurationVar(&t.Drain, "drain", 10*time.Second, "on stop, how long to wait for acknowledgements before giving up")
	fs.StringVar(&t.StateDir, "state-dir", env("SESSIONPIPE_STATE_DIR"), "checkpoint directory (env SESSIONPIPE_STATE_DIR; default <data-dir>/tailer)")
}

// DefaultGlobs are the well-known transcript locations under home.
func DefaultGlobs(home string, env Env) []string {
	claude := []string{filepath.Join(home, ".claude"), filepath.Join(home, ".config", "claude")}
	if d := env("CLAUDE_CONFIG_DIR"); d != "" {
		claude = strings.Split(d, ",")
	}
	var g []string
	for _, d := range claude {
		g = append(g, filepath.Join(d, "projects", "**", "*.jsonl"))
	}
	codex := orDefault(env("CODEX_HOME"), filepath.Join(home, ".codex"))
	pi := orDefault(env("PI_AGENT_DIR"), filepath.Join(home, ".pi", "agent"))
	g = append(g,
		filepath.Join(codex, "sessions", "**", "*.jsonl"),
		filepath.Join(codex, "archived_sessions", "**", "*.jsonl"),
		filepath.Join(pi, "sessions", "**", "*"),
	)
	for _, d := range []string{".openclaw", ".clawdbot", ".moltbot", ".moldbot"} {
		g = append(g,
			filepath.Join(home, d, "agents", "*", "sessions", "*"),
			filepath.Join(home, d, "sessions", "*"),
		)
	}
	if d := env("OPENCLAW_TRAJECTORY_DIR"); d != "" {
		// OpenClaw's trajectories moved out of the sessions directories
		// (<session>.jsonl there; see formats/trajectory).
		g = append(g, filepath.Join(d, "*.jsonl"))
	}
	g = append(g, filepath.Join(home, "nexus", "state", "sessions", "**", "*"))
	// Gemini CLI: GEMINI_CLI_HOME replaces the home directory it keeps
	// .gemini under; a subagent's chats are in chats/<parent session>/.
	gemini := filepath.Join(orDefault(env("GEMINI_CLI_HOME"), home), ".gemini")
	g = append(g, filepath.Join(gemini, "tmp", "*", "chats", "**", "*.jsonl"))
	// GitHub Copilot CLI: session-state/<session>/events.jsonl, and the
	// flat session-state/<session>.jsonl of its versions before 0.0.400.
	copilot := orDefault(env("COPILOT_HOME"), filepath.Join(home, ".copilot"))
	g = append(g,
		filepath.Join(copilot, "session-state", "*", "events.jsonl"),
		filepath.Join(copilot, "session-state", "*.jsonl"),
	)
	// Whole-file documents (read whole at every change): Gemini CLI's
	// earlier session-*.json, Amp's threads (AMP_DATA_DIR, a comma
	// separated list as ccusage reads it, replaces ~/.local/share/amp),
	// Droid's session settings (DROID_SESSIONS_DIR, the same, replaces
	// ~/.factory/sessions).
	g = append(g, filepath.Join(gemini, "tmp", "*", "chats", "**", "session-*.json"))
	for _, d := range listOr(env("AMP_DATA_DIR"), filepath.Join(home, ".local", "share", "amp")) {
		g = append(g, filepath.Join(d, "threads", "**", "*.json"))
	}
	for _, d := range listOr(env("DROID_SESSIONS_DIR"), filepath.Join(home, ".factory", "sessions")) {
		g = append(g, filepath.Join(d, "**", "*.settings.json"))
	}
	// Codebuff's chats: projects/<project>/chats/<chat>/chat-messages.json
	// under each channel root (CODEBUFF_DATA_DIR, comma separated as
	// ccusage reads it, replaces ~/.config/manicode, manicode-dev and
	// manicode-staging).
	codebuff := []string{
		filepath.Join(home, ".config", "manicode"),
		filepath.Join(home, ".config", "manicode-dev"),
		filepath.Join(home, ".config", "manicode-staging"),
	}
	if d := listOr(env("CODEBUFF_DATA_DIR"), ""); d[0] != "" {
		codebuff = d
	}
	for _, d := range codebuff {
		g = append(g, filepath.Join(d, "projects", "*", "chats", "*", "chat-messages.json"))
	}
	// Grok Build CLI: sessions/<url-encoded cwd>/<session>/updates.jsonl
	// under GROK_HOME (default ~/.grok); only updates.jsonl, since its
	// siblings (chat_history.jsonl, events.jsonl, rewind_points.jsonl)
	// describe the same turns.
	grok := orDefault(env("GROK_HOME"), filepath.Join(home, ".grok"))
	g = append(g, filepath.Join(grok, "sessions", "*", "*", "updates.jsonl"))
	// Qwen Code: projects/<project>/chats/<session>.jsonl under its
	// runtime directory (QWEN_RUNTIME_DIR, else QWEN_HOME, else ~/.qwen).
	qwen := orDefault(env("QWEN_RUNTIME_DIR"), orDefault(env("QWEN_HOME"), filepath.Join(home, ".qwen")))
	g = append(g, filepath.Join(qwen, "projects", "*", "chats", "*.jsonl"))
	// Kimi CLI: sessions/<work-dir hash>/<session>/wire.jsonl and its
	// subagents' subagents/<agent>/wire.jsonl under KIMI_SHARE_DIR, else
	// ~/.kimi (the context.jsonl beside them holds no usage).
	kimi := orDefault(env("KIMI_SHARE_DIR"), filepath.Join(home, ".kimi"))
	g = append(g,
		filepath.Join(kimi, "sessions", "*", "*", "wire.jsonl"),
		filepath.Join(kimi, "sessions", "*", "*", "subagents", "*", "wire.jsonl"),
	)
	// OpenCode: a SQLite database (opencode.db, opencode-<channel>.db),
	// polled rather than tailed, in $XDG_DATA_HOME/opencode; ccusage's
	// OPENCODE_DATA_DIR (a comma-separated list) replaces it.
	opencode := []string{filepath.Join(orDefault(env("XDG_DATA_HOME"), filepath.Join(home, ".local", "share")), "opencode")}
	if d := env("OPENCODE_DATA_DIR"); d != "" {
		opencode = strings.Split(d, ",")
	}
	for _, d := range opencode {
		if d = strings.TrimSpace(d); d != "" {
			g = append(g, filepath.Join(d, "opencode*.db"))
		}
	}
	// Kilo CLI (an OpenCode fork): kilo.db in KILO_DATA_DIR, else
	// $XDG_DATA_HOME/kilo (~/.local/share/kilo), polled as OpenCode's.
	g = append(g, filepath.Join(orDefault(env("KILO_DATA_DIR"), filepath.Join(orDefault(env("XDG_DATA_HOME"), filepath.Join(home, ".local", "share")), "kilo")), "kilo.db"))
	// Goose: its sessions database, polled too; GOOSE_PATH_ROOT moves
	// it to <root>/data/sessions.
	if d := env("GOOSE_PATH_ROOT"); d != "" {
		g = append(g, filepath.Join(d, "data", "sessions", "sessions.db"))
	} else {
		g = append(g,
			filepath.Join(orDefault(env("XDG_DATA_HOME"), filepath.Join(home, ".local", "share")), "goose", "sessions", "sessions.db"),
			filepath.Join(home, "Library", "Application Support", "goose", "sessions", "sessions.db"),
		)
	}
	// Hermes Agent: state.db in its home (HERMES_HOME, comma-separated as
	// ccusage reads it, else ~/.hermes) and in each named profile's home
	// (<home>/profiles/<name>/, which ccusage does not read); polled, a
	// state.db counted only when its tables are Hermes's.
	for _, d := range listOr(env("HERMES_HOME"), filepath.Join(home, ".hermes")) {
		g = append(g, filepath.Join(d, "state.db"), filepath.Join(d, "profiles", "*", "state.db"))
	}
	return g
}

// listOr returns the comma-separated directories of v (blanks trimmed),
// or def when it names none.
func listOr(v, def string) []string {
	var out []string
	for _, d := range strings.Split(v, ",") {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		return []string{def}
	}
	return out
}

// Watches resolves what a tailer follows: the -watch values and a
// command's PATH arguments, else (defaults true) the well-known locations
// of every agent under $HOME; "~/" expanded, each made absolute. A PATH
// named without a wildcard must exist: a mistyped argument is an error,
// where a -watch on a directory still to be created is not.
func Watches(watch, paths []string, env Env) (globs []string, defaults bool, err error) {
	for _, p := range paths {
		if err := CheckPath(p); err != nil {
			return nil, false, err
		}
	}
	globs = append(slices.Clone(watch), paths...)
	home := env("HOME")
	if len(globs) == 0 {
		if home == "" {
			return nil, false, errors.New("no -watch given and HOME is not set")
		}
		globs, defaults = DefaultGlobs(home, env), true
	}
	for i, g := range globs {
		if globs[i], err = filepath.Abs(discover.ExpandHome(g, home)); err != nil {
			return nil, false, err
		}
	}
	return globs, defaults, nil
}

// CheckPath checks a PATH argument: one without a wildcard must exist.
func CheckPath(p string) error {
	if formats.HasMeta(p) {
		return nil
	}
	if _, err := os.Stat(p); err != nil {
		return fmt.Errorf("PATH %s: %w", p, err)
	}
	return nil
}

// RunningTailer is a tailer wired to its publisher and metrics endpoint.
type RunningTailer struct {
	Tailer    *tail.Tailer
	Publisher *bus.Publisher
	Metrics   *Server  // nil when -metrics is empty
	Watch     []string // the watches, absolute
	progress  io.Writer
}

// RunTailer runs a tailer with the flags in t on the bus b until ctx
// ends. progress, when not nil, receives a progress line every second
// while there is a backlog.
func RunTailer(ctx context.Context, t *Tailer, n *NATS, b *Bus, env Env, log *slog.Logger, progress io.Writer) error {
	rt, err := StartTailer(ctx, t, n, b, env, log, progress)
	if err != nil {
		return err
	}
	return rt.Run(ctx)
}

// StartTailer builds the tailer the flags describe and serves its
// metrics; [RunningTailer.Run] then follows the files.
func StartTailer(ctx context.Context, t *Tailer, n *NATS, b *Bus, env Env, log *slog.Logger, progress io.Writer) (*RunningTailer, error) {
	if t.contentErr != nil {
		return nil, t.contentErr
	}
	if t.Labels.err != nil {
		return nil, t.Labels.err
	}
	red, err := redact.New(redact.Config{Mode: t.Content})
	if err != nil {
		return nil, err
	}
	if t.FromStart && t.FromEnd {
		return nil, fmt.Errorf("-from-start and -from-end exclude each other")
	}
	globs, defaults, err := Watches(t.Watch, nil, env)
	if err != nil {
		return nil, err
	}
	state := t.StateDir
	if state == "" {
		state = filepath.Join(n.DataDir, "tailer")
	}
	pub, err := bus.NewPublisher(b.JS, bus.PublisherConfig{Logger: log})
	if err != nil {
		return nil, err
	}
	reg := t.Registry
	if reg == nil {
		reg = NewRegistry()
	}
	if err := reg.Register(publisherCollector{pub}); err != nil {
		closePublisher(ctx, pub)
		return nil, fmt.Errorf("register the publisher's metrics: %w", err)
	}
	tl, err := tail.New(tail.Config{
		Watch: globs, StateDir: state, Host: Hostname(t.Host), Publisher: pub, Prefix: n.Stream.Prefix,
		FromEnd: t.FromEnd, Text: !t.NoText, Raw: t.Raw, MaxLineBytes: t.MaxLineBytes,
		MaxOpenFiles: t.MaxOpenFiles, RescanInterval: t.Rescan, Poll: t.Poll, Drain: t.Drain, Static: t.Static,
		DefaultWatches: defaults, Redactor: red, Archive: t.Archive, Labels: t.Labels.m, Logger: log,
		Registry: reg,
	})
	if err != nil {
		closePublisher(ctx, pub)
		return nil, err
	}
	mux := http.NewServeMux()
	rt := &RunningTailer{Tailer: tl, Publisher: pub, Watch: globs, progress: progress}
	mux.Handle("/metrics", MetricsHandler(reg, log))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	srv, err := ListenWithMetrics(t.Metrics, mux, reg)
	if err != nil {
		closePublisher(ctx, pub)
		return nil, err
	}
	if srv != nil {
		log.Info("tailer metrics", "url", "http://"+srv.Addr()+"/metrics", "watch", globs)
	} else {
		log.Info("tailer starting without a metrics endpoint", "watch", globs)
	}
	rt.Metrics = srv
	return rt, nil
}

// Run follows the files until ctx ends, then stops gracefully and closes
// the publisher.
func (rt *RunningTailer) Run(ctx context.Context) error {
	defer closePublisher(ctx, rt.Publisher)
	// The metrics endpoint and the progress line live as long as the
	// tailer, which drains after ctx ends.
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	var serveErr error
	wg.Go(func() { serveErr = rt.Metrics.Run(sctx) })
	if rt.progress != nil {
		wg.Go(func() { showProgress(sctx, rt.Tailer, rt.progress) })
	}
	err := rt.Tailer.Run(ctx)
	stop()
	wg.Wait()
	return errors.Join(err, serveErr)
}

func closePublisher(ctx context.Context, pub *bus.Publisher) {
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	pub.Close(closeCtx)
}

// showProgress prints files, bytes and entries per second while the
// tailer has a backlog, on one terminal line.
func showProgress(ctx context.Context, tl *tail.Tailer, w io.Writer) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	start := time.Now()
	shown := false
	for {
		select {
		case <-ctx.Done():
			if shown {
				fmt.Fprint(w, "\r\033[K")
			}
			return
		case <-tick.C:
			s := tl.Metrics().Snapshot()
			if s.LagBytes == 0 && !shown {
				continue
			}
			secs := time.Since(start).Seconds()
			fmt.Fprintf(w, "\r\033[Kbackfill: %s, %.1f MB read, %d entries published (%.0f/s), %.1f MB to go",
				Count(s.Files, "file"), float64(s.Bytes)/1e6, s.AckedEntries, float64(s.AckedEntries)/secs, float64(s.LagBytes)/1e6)
			shown = true
			if s.LagBytes == 0 {
				fmt.Fprintln(w)
				shown = false
			}
		}
	}
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// envBool reads a boolean environment value: "", the default; 1, true,
// yes, on; 0, false, no, off (any case). Anything else is the default,
// and flag parsing then rejects nothing: use the flag to be strict.
func envBool(v string, def bool) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	case "0", "false", "no", "off":
		return false
	}
	return def
}
