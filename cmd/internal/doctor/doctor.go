package doctor

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"golang.org/x/sys/unix"

	"github.com/sessionpipe/sessionpipe/cmd/internal/exportcmd"
	"github.com/sessionpipe/sessionpipe/cmd/internal/indexcmd"
	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/dirlock"
	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
	"github.com/sessionpipe/sessionpipe/pipeline/export/objstore"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
	"github.com/sessionpipe/sessionpipe/pipeline/tail"
)

// Doctor checks this machine for one daemon command, with the flags,
// environment and config file that command would use, and says for each
// problem what to fix. It starts nothing and stores nothing in the
// stream; the only writes are a temporary file created and removed in
// each directory the command writes to.
//
// The checks, in order (those that do not apply to the command are left
// out):
//
//   - config: the config file read (or none) parsed, and the values the
//     command refuses at start (-content, -label, -http without -token,
//     the rules and prices files...). A failure here ends the checks.
//   - watch (tailer, run): what each watch matches now and whether it has
//     a directory to wait on; transcripts that cannot be opened.
//   - dir: the data directory and each state directory exist or can be
//     created, are writable, and whether another process holds them.
//   - state (indexer, run): the indexer's state reads back, every table
//     and record of it (not while an indexer holds it).
//   - inotify (tailer and run on Linux, without -poll): the directories
//     the tailer would watch against fs.inotify.max_user_watches, and the
//     inotify instances left.
//   - nats: with -nats, the connection made as the daemons make it, the
//     stream (subjects, replicas, cluster), for a tailer a publish to its
//     subjects that the stream refuses (so permissions are proved and
//     nothing is stored), for the services their durable consumers and
//     leases; without -nats, the embedded server's port and store.
//   - clock: with -nats the local clock against the server's, else the
//     modification times of the transcripts against the local clock.
//   - disk: the free space where the data, Parquet and archive go.
//
// Set Command and Env, call [Doctor.Parse], then [Doctor.Check].
type Doctor struct {
	// Command is the command checked, from [LookupCommand].
	Command cli.Command
	// Env is the environment the command would read (os.Getenv).
	Env cli.Env
	// ProcRoot is the proc file system; default "/proc". Tests give a
	// fake tree.
	ProcRoot string
	// Timeout bounds each step that asks NATS; set by Parse from
	// -timeout (default [DefaultDoctorTimeout]).
	Timeout time.Duration
	// JSON asks for the results as JSON; set by Parse from -json.
	JSON bool

	nats     *cli.NATS
	logging  *cli.Logging
	tailer   *cli.Tailer   // tailer, run
	indexer  *cli.Indexer  // indexer serve, run
	exporter *cli.Exporter // exporter serve, run
	compact  *cli.Compact  // exporter compact
	paths    []string      // run's PATHs
	config   *cli.Config
	cfgErr   error
}

// DefaultDoctorTimeout is how long each NATS step of the doctor may take.
const DefaultDoctorTimeout = 5 * time.Second

// Status is the outcome of a [Check]: [CheckOK], [CheckWarn] or
// [CheckFail].
type Status int

// The outcomes of a check, from the best.
const (
	CheckOK   Status = iota // nothing to do
	CheckWarn               // works, but look at it
	CheckFail               // the command would fail or lose data: fix it
)

// String is "ok", "warn" or "FAIL", as the text output shows it.
func (s Status) String() string {
	return [...]string{"ok", "warn", "FAIL"}[s]
}

// MarshalText is "ok", "warn" or "fail", for JSON.
func (s Status) MarshalText() ([]byte, error) {
	return []byte(strings.ToLower(s.String())), nil
}

// Check is the result of one check of [Doctor.Check].
type Check struct {
	Status Status `json:"status"`
	// Name is the check: config, watch, dir, state, inotify, nats,
	// clock or disk.
	Name string `json:"check"`
	// Message says what was checked and found.
	Message string `json:"message"`
	// Fix is what to do, with the exact command or flag; empty for ok.
	Fix string `json:"fix,omitempty"`
}

// Failures returns how many checks failed.
func Failures(checks []Check) int {
	n := 0
	for _, c := range checks {
		if c.Status == CheckFail {
			n++
		}
	}
	return n
}

// WriteChecks writes one line per check: its status, its name, what was
// found and, for a warning or failure, "fix:" and what to do.
func WriteChecks(w io.Writer, checks []Check) error {
	var b strings.Builder
	for _, c := range checks {
		fmt.Fprintf(&b, "%-4s  %-7s  %s", c.Status, c.Name, c.Message)
		if c.Fix != "" {
			fmt.Fprintf(&b, "  fix: %s", c.Fix)
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteChecksJSON writes the checks as an indented JSON array.
func WriteChecksJSON(w io.Writer, checks []Check) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if checks == nil {
		checks = []Check{}
	}
	return enc.Encode(checks)
}

// Parse registers the flags of d.Command and the doctor's own (-timeout,
// and -json unless the command has one, as run does: its -json then
// serves) on fs and parses args as the command would, environment and
// config file included. A mistake on the command line is returned (a
// [UsageError], or flag.ErrHelp for -h); a bad value from the
// environment or the config file is not: it is the failed config check
// of [Doctor.Check].
func (d *Doctor) Parse(fs *flag.FlagSet, args []string) error {
	env := d.Env
	switch d.Command.Name {
	case "run":
		var r cli.Run
		r.Register(fs, env)
		d.nats, d.logging, d.tailer, d.indexer, d.exporter = &r.NATS, &r.Logging, &r.Tailer, &r.Indexer, &r.Exporter
	case "tailer", "indexer serve", "exporter serve":
		var dm cli.Daemon
		own := func(*flag.FlagSet, cli.Env) {}
		switch d.Command.Name {
		case "tailer":
			d.tailer = new(cli.Tailer)
			own = d.tailer.Register
		case "indexer serve":
			d.indexer = new(cli.Indexer)
			own = d.indexer.Register
		default:
			d.exporter = new(cli.Exporter)
			own = d.exporter.Register
		}
		dm.Register(fs, env, own)
		d.nats, d.logging = &dm.NATS, &dm.Logging
	case "exporter compact":
		d.compact = new(cli.Compact)
		d.compact.Register(fs, env)
		d.nats, d.logging = &d.compact.NATS, &d.compact.Logging
	default:
		return cli.UsageError{Msg: fmt.Sprintf("no checks for command %q", d.Command.Name)}
	}
	if fs.Lookup("json") == nil {
		fs.Bool("json", false, "print the results as a JSON array")
	}
	fs.DurationVar(&d.Timeout, "timeout", DefaultDoctorTimeout, "how long each step asking NATS may take")
	// The flag package calls Usage for every mistake on the command line
	// (and for -h), never for the environment or the config file.
	usage, onCommandLine := fs.Usage, false
	fs.Usage = func() {
		onCommandLine = true
		if usage != nil {
			usage()
		}
	}
	cfg, err := cli.ParseFlags(fs, d.Command.Name, args, env)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return err
	case err != nil && onCommandLine:
		return cli.UsageError{Msg: err.Error()}
	}
	d.config, d.cfgErr = cfg, err
	if d.Command.Name == "run" {
		d.exporter.NoArchive = !d.tailer.Archive // as run sets it
	}
	d.JSON = fs.Lookup("json").Value.String() == "true"
	if fs.NArg() > 0 {
		if d.Command.Name != "run" {
			return cli.UsageError{Msg: fmt.Sprintf("unexpected arguments %q (%s takes none)", fs.Args(), d.Command.Title())}
		}
		d.paths = fs.Args()
	}
	if d.Timeout <= 0 {
		return cli.UsageError{Msg: fmt.Sprintf("-timeout %s: want a positive duration", d.Timeout)}
	}
	return nil
}

// report collects the checks.
type report struct{ checks []Check }

func (r *report) add(s Status, name, fix, format string, a ...any) {
	r.checks = append(r.checks, Check{Status: s, Name: name, Message: fmt.Sprintf(format, a...), Fix: fix})
}

func (r *report) ok(name, format string, a ...any) { r.add(CheckOK, name, "", format, a...) }

// Check runs the checks for the command parsed and returns their
// results; see [Doctor]. ctx bounds the NATS steps (each also by
// d.Timeout).
func (d *Doctor) Check(ctx context.Context) []Check {
	var r report
	if !d.checkConfig(&r) {
		return r.checks
	}
	var sv *tail.Survey
	if d.tailer != nil {
		sv = d.checkWatches(&r)
	}
	d.checkDirs(&r)
	d.checkListeners(&r)
	if d.indexer != nil {
		d.checkIndexState(&r)
	}
	if sv != nil {
		d.checkInotify(&r, sv)
	}
	if !d.checkNATS(ctx, &r) && sv != nil {
		checkFileClock(&r, sv, time.Now())
	}
	d.checkDisk(&r)
	return r.checks
}

// checkConfig reports the config file and the values the command would
// refuse at start; it returns false when the configuration could not be
// read, and the other checks would check something else.
func (d *Doctor) checkConfig(r *report) bool {
	const name = "config"
	if d.cfgErr != nil {
		short := strings.TrimSuffix(strings.TrimPrefix(d.Command.Name, "exporter compact"), " serve")
		r.add(CheckFail, name, fmt.Sprintf("correct the place named (sessionpipe config %s shows the values read; docs/CONFIG.md lists the keys)", cmp.Or(short, "compact")),
			"%s", strings.ReplaceAll(d.cfgErr.Error(), "\n", "; "))
		return false
	}
	if s := d.config.Lookup("config"); d.config.File == "" {
		r.ok(name, "no config file: flags, environment and defaults only")
	} else {
		n := 0
		for _, st := range d.config.Settings {
			if st.Source.Kind == cli.FromFile {
				n++
			}
		}
		r.ok(name, "config file %s (from %s) parsed: %d settings from it", d.config.File, s.Source, n)
	}
	fail := func(fix string, err error) { r.add(CheckFail, name, fix, "%v", err) }
	if _, err := d.logging.Logger(io.Discard); err != nil {
		fail("-log-level debug|info|warn|error, -log-format text|json", err)
	}
	if err := d.nats.Stream.Validate(); err != nil {
		fail("correct -stream, -prefix or -replicas", err)
	}
	if d.nats.URL != "" {
		err := bus.ConnConfig{URL: d.nats.URL, TLSCert: d.nats.TLSCert, TLSKey: d.nats.TLSKey, InboxPrefix: d.nats.InboxPrefix}.Validate()
		if err != nil {
			fail("correct -tls-cert/-tls-key or -inbox-prefix", err)
		}
	}
	if t := d.tailer; t != nil {
		if t.ContentErr() != nil {
			fail("SESSIONPIPE_CONTENT=full|redacted|metadata", t.ContentErr())
		}
		if t.LabelsErr() != nil {
			fail("SESSIONPIPE_LABELS=key=value,key2=value2", t.LabelsErr())
		}
		if t.FromStart && t.FromEnd {
			fail("give one of -from-start and -from-end", errors.New("-from-start and -from-end exclude each other"))
		}
	}
	if ix := d.indexer; ix != nil {
		if ix.HTTP != "" && ix.Token == "" && !cli.IsLoopback(ix.HTTP) {
			fail("-token SECRET (env SESSIONPIPE_TOKEN), or -http 127.0.0.1:7474",
				fmt.Errorf("-http %s is not a loopback address and no -token is set: the indexer refuses to start", ix.HTTP))
		}
		if _, err := indexcmd.LoadPrices(ix.Prices); err != nil {
			fail("correct or remove -prices (env SESSIONPIPE_PRICES)", err)
		}
		if ix.Rules != "" {
			if _, err := alert.Load(ix.Rules); err != nil {
				fail("correct the rules file, or remove -rules (env SESSIONPIPE_RULES)", err)
			}
		}
	}
	if x := d.exporter; x != nil {
		if out, archive := x.Dirs(d.nats.DataDir); out == archive {
			fail("give -archive-dir another directory than -out", fmt.Errorf("-out and -archive-dir are the same directory %s", out))
		}
	}
	return true
}

// checkWatches reports what each watch of the tailer matches now, as
// the tailer walks them ([tail.SurveyWatches]).
func (d *Doctor) checkWatches(r *report) *tail.Survey {
	const name = "watch"
	globs, defaults, err := cli.Watches(d.tailer.Watch, d.paths, d.Env)
	if err != nil {
		r.add(CheckFail, name, "give -watch DIR (or PATH to run)", "%v", err)
		return &tail.Survey{}
	}
	valid := globs[:0:0]
	for _, g := range globs {
		if _, err := os.Stat(g); err != nil && !doublestar.ValidatePattern(filepath.ToSlash(g)) {
			r.add(CheckFail, name, "correct the pattern (doublestar syntax: *, **, ?, [a-z], {a,b})", "%s: not a valid glob: the tailer refuses it", g)
			continue
		}
		valid = append(valid, g)
	}
	sv, err := tail.SurveyWatches(valid)
	if err != nil {
		r.add(CheckFail, name, "correct -watch", "%v", err)
		return &tail.Survey{}
	}
	var absent []string
	total := 0
	for _, w := range sv.Watches {
		total += len(w.Files)
		switch {
		case len(w.Files) > 0:
			r.ok(name, "%s: %s", w.Watch, cli.Count(len(w.Files), "transcript file"))
		case defaults && !w.Waits:
			absent = append(absent, w.Watch)
		case w.Waits:
			r.ok(name, "%s: no transcript yet; waiting on %s", w.Watch, w.Dir)
		default:
			r.add(CheckWarn, name, "correct -watch, or create the directory: mkdir -p "+shellWord(w.Dir),
				"%s: matches nothing and has no directory to wait on", w.Watch)
		}
	}
	if len(absent) > 0 {
		r.ok(name, "%d of %d well-known locations not on this machine (agents not installed)", len(absent), len(sv.Watches))
	}
	if defaults && len(absent) == len(sv.Watches) {
		r.add(CheckWarn, name, "give the transcript directories with -watch DIR (or PATH to run)",
			"no agent's transcripts in any well-known location under %s", d.Env("HOME"))
	}
	var bad []string
	for _, w := range sv.Watches {
		for _, f := range w.Files {
			h, err := formats.OpenRegular(f.Path)
			if err != nil {
				bad = append(bad, err.Error())
				continue
			}
			h.Close()
		}
	}
	if len(bad) > 0 {
		r.add(CheckFail, name, fmt.Sprintf("make them readable by uid %d (chmod a+r FILE), or run the tailer as their owner", os.Getuid()),
			"%d of %d transcript files cannot be opened for reading: %s", len(bad), total, firstFew(bad))
	}
	if len(sv.LeftOut) > 0 {
		r.ok(name, "%s under the watches not followed: names not read as transcripts (%s)", cli.Count(len(sv.LeftOut), "file"), firstFew(sv.LeftOut))
	}
	if len(sv.Databases) > 0 {
		r.ok(name, "%s polled (agents' SQLite databases: %s)", cli.Count(len(sv.Databases), "database"), firstFew(sv.Databases))
	}
	if len(sv.Errors) > 0 {
		errs := make([]string, len(sv.Errors))
		for i, err := range sv.Errors {
			errs[i] = err.Error()
		}
		r.add(CheckWarn, name, fmt.Sprintf("give uid %d read and search permission on them (chmod a+rx DIR)", os.Getuid()),
			"%d paths under the watches cannot be read, and are skipped: %s", len(errs), firstFew(errs))
	}
	return sv
}

// firstFew joins up to five items, saying how many more there are.
func firstFew(items []string) string {
	const most = 5
	if len(items) <= most {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(items[:most], "; "), len(items)-most)
}

// doctorDir is a directory a command writes to.
type doctorDir struct {
	what, path, flag string
	disk             bool // its free space is checked
}

// dirs returns the directories the command writes to, the data
// directory first.
func (d *Doctor) dirs() []doctorDir {
	data := d.nats.DataDir
	dirs := []doctorDir{{"data directory", data, "-data-dir", true}}
	if t := d.tailer; t != nil {
		dirs = append(dirs, doctorDir{"tailer checkpoints", cmp.Or(t.StateDir, filepath.Join(data, "tailer")), "-state-dir", false})
	}
	if ix := d.indexer; ix != nil {
		dirs = append(dirs, doctorDir{"indexer state", cmp.Or(ix.StateDir, filepath.Join(data, "indexer")), "-index-dir", false})
	}
	if x := d.exporter; x != nil {
		out, archive := x.Dirs(data)
		dirs = append(dirs, doctorDir{"Parquet", out, "-out", true})
		if archive != "" {
			dirs = append(dirs, doctorDir{"archive", archive, "-archive-dir (or -no-archive; run: -archive=false)", true})
		}
	}
	if c := d.compact; c != nil {
		dirs = append(dirs, doctorDir{"Parquet", cmp.Or(c.Out, filepath.Join(data, "parquet")), "-out", true})
	}
	return dirs
}

// checkIndexState reads the indexer's state back without its lock, and
// names a corrupt or missing table, or a state that cannot be read.
func (d *Doctor) checkIndexState(r *report) {
	const name = "state"
	dir, err := filepath.Abs(cmp.Or(d.indexer.StateDir, filepath.Join(d.nats.DataDir, "indexer")))
	if err != nil {
		return // reported by checkDirs
	}
	if h := holder(dir, "indexer state"); h != nil {
		r.ok(name, "indexer state %s: in use by process %d, not read (its files change while it runs)", dir, h.PID)
		return
	}
	sum, err := index.CheckStore(dir)
	switch {
	case errors.Is(err, index.ErrNoState):
		r.ok(name, "indexer state %s: none yet (built from the stream at the first start)", dir)
	case errors.Is(err, index.ErrCorruptState):
		r.add(CheckFail, name, "start the indexer: it moves the state aside (state.corrupt-<time>) and rebuilds it from the stream",
			"indexer state %s is corrupt: %v", dir, err)
	case err != nil:
		r.add(CheckFail, name, "fix what the error names (free space, permissions), then start the indexer: it resumes from the last state committed",
			"indexer state %s cannot be read: %v", dir, err)
	case sum.Keys > 0 && sum.Layout != index.StoreLayout:
		r.add(CheckWarn, name, "start the indexer: it rebuilds the state from the stream (what aged out of the stream is lost)",
			"indexer state %s has layout %d, this version reads layout %d (sessions keyed by format, host and id)", dir, sum.Layout, index.StoreLayout)
	default:
		r.ok(name, "indexer state %s reads back: %s in %s, %s, applied up to stream sequence %d",
			dir, cli.Count(sum.Tables, "table"), cli.HumanBytes(sum.Bytes), cli.Count(sum.Keys, "record"), sum.Seq)
	}
}

// checkDirs reports whether each directory the command writes to is, or
// can be made, writable, and who holds it.
func (d *Doctor) checkDirs(r *report) {
	const name = "dir"
	holders := make(map[int]bool)
	for _, dd := range d.dirs() {
		if objstore.IsURL(dd.path) {
			d.checkBucket(r, dd)
			continue
		}
		path, err := filepath.Abs(dd.path)
		if err != nil {
			r.add(CheckFail, name, "give "+dd.flag+" an absolute path", "%s %s: %v", dd.what, dd.path, err)
			continue
		}
		fix := fmt.Sprintf("give uid %d write access (chown or chmod), or choose another directory with %s", os.Getuid(), dd.flag)
		existing, err := nearestDir(path)
		if err != nil {
			r.add(CheckFail, name, "remove what is in the way, or choose another directory with "+dd.flag, "%s %s cannot be created: %v", dd.what, path, err)
			continue
		}
		if err := writable(existing); err != nil {
			r.add(CheckFail, name, fix, "%s %s: %v", dd.what, path, err)
			continue
		}
		msg := fmt.Sprintf("%s %s: writable", dd.what, path)
		if existing != path {
			msg = fmt.Sprintf("%s %s: to be created under %s, writable", dd.what, path, existing)
		}
		if h := holder(path, dd.what); h != nil {
			if holders[h.PID] {
				r.ok(name, "%s; in use by process %d too", msg, h.PID)
			} else {
				holders[h.PID] = true
				r.add(CheckWarn, name, fmt.Sprintf("if that is not this very service: stop process %d, or choose another directory with %s", h.PID, dd.flag),
					"%s; %v", msg, heldBy(h))
			}
			continue
		}
		r.ok(name, "%s", msg)
	}
}

// checkBucket checks an output in a bucket: the bucket exists, the
// credentials may list it, and its manifest reads.
func (d *Doctor) checkBucket(r *report, dd doctorDir) {
	const name = "bucket"
	s3 := new(cli.S3)
	if d.exporter != nil {
		s3 = &d.exporter.S3
	} else if d.compact != nil {
		s3 = &d.compact.S3
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := exportcmd.OpenBucket(ctx, s3, dd.path)
	if err != nil {
		r.add(CheckFail, name, "create the bucket, or correct "+dd.flag+", -s3-endpoint, -s3-region and the credentials (AWS_ACCESS_KEY_ID, AWS_PROFILE, the instance role)",
			"%s %s: %v", dd.what, dd.path, err)
		return
	}
	var n int
	if strings.Contains(dd.what, "archive") {
		segs, e := archive.ReadBucketArchiveManifest(ctx, b)
		n, err = len(segs), e
	} else {
		m, e := parquet.ReadBucketManifest(ctx, b)
		if e == nil {
			n = len(m.Files)
		}
		err = e
	}
	if err != nil {
		r.add(CheckFail, name, "repair or remove the manifest object (see docs/s3.md)", "%s %s: %v", dd.what, dd.path, err)
		return
	}
	r.ok(name, "%s %s: reachable, %d objects listed in its manifest", dd.what, dd.path, n)
	d.checkConditionalPut(ctx, r, b, dd)
}

// checkConditionalPut writes a probe object twice with If-None-Match: *
// (then removes it): a server that takes the second write ignores
// conditional writes, which keep two exporters on one prefix apart.
func (d *Doctor) checkConditionalPut(ctx context.Context, r *report, b *objstore.Bucket, dd doctorDir) {
	const name, probe = "bucket", "_sessionpipe-doctor-probe"
	defer b.Delete(ctx, probe)
	_, err := b.Put(ctx, probe, []byte("probe\n"), objstore.Cond{IfNoneMatch: true})
	if err == nil || errors.Is(err, objstore.ErrPrecondition) {
		_, err = b.Put(ctx, probe, []byte("probe\n"), objstore.Cond{IfNoneMatch: true})
	}
	switch {
	case errors.Is(err, objstore.ErrPrecondition):
		r.ok(name, "%s %s: conditional writes honoured (If-None-Match)", dd.what, dd.path)
	case err == nil:
		r.add(CheckWarn, name, "run one exporter per prefix (one -consumer name), or use a server that supports conditional PUT (docs/s3.md)",
			"%s %s: the server ignores If-None-Match: two exporters writing this prefix would not be kept apart", dd.what, dd.path)
	default:
		r.add(CheckFail, name, "give the credentials s3:PutObject and s3:DeleteObject on the prefix", "%s %s: cannot write: %v", dd.what, dd.path, err)
	}
}

// nearestDir returns path when it is a directory, else the nearest
// existing directory above it, from which it would be created; it fails
// when what exists at path or on the way is no directory.
func nearestDir(path string) (string, error) {
	for p := path; ; p = filepath.Dir(p) {
		info, err := os.Stat(p)
		switch {
		case err == nil && info.IsDir():
			return p, nil
		case err == nil:
			return "", fmt.Errorf("%s is not a directory", p)
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return "", err
		case filepath.Dir(p) == p:
			return "", err
		}
	}
}

// writable creates and removes a temporary file in dir.
func writable(dir string) error {
	f, err := os.CreateTemp(dir, ".sessionpipe-doctor-*")
	if err != nil {
		return fmt.Errorf("not writable: %w", err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// holder returns who holds the lock of dir, or nil. dirlock.Holder
// probes with a shared lock and creates nothing; a probe that fails (the
// lock file unreadable) names nobody here, and the directory's own checks
// report why.
func holder(dir, what string) *dirlock.HeldError {
	h, err := dirlock.Holder(dir, what)
	if err != nil {
		return nil
	}
	return h
}

// heldBy says which process holds a directory.
func heldBy(h *dirlock.HeldError) string {
	s := "in use by process " + strconv.Itoa(h.PID)
	if h.PID == 0 {
		s = "in use by another process"
	}
	if h.Command != "" {
		s += " (" + h.Command + ")"
	}
	if !h.Since.IsZero() {
		s += " since " + h.Since.Format(time.RFC3339)
	}
	return s
}

// checkInotify compares the directories the tailer would watch with the
// inotify limits of this user.
func (d *Doctor) checkInotify(r *report, sv *tail.Survey) {
	const name = "inotify"
	switch {
	case runtime.GOOS != "linux":
		r.ok(name, "skipped: not Linux")
		return
	case d.tailer.Poll:
		r.ok(name, "skipped: -poll (rescans only, no file notifications)")
		return
	}
	root := cmp.Or(d.ProcRoot, "/proc")
	limit, err := readProcInt(filepath.Join(root, "sys", "fs", "inotify", "max_user_watches"))
	if err != nil {
		r.add(CheckWarn, name, "check that "+root+" is mounted, or run with -poll", "%v", err)
		return
	}
	n := int64(sv.Dirs)
	want := max(int64(1)<<bits.Len64(uint64(2*n)), 524288)
	fix := fmt.Sprintf("sudo sysctl fs.inotify.max_user_watches=%d, and keep it: echo fs.inotify.max_user_watches=%d | sudo tee /etc/sysctl.d/90-sessionpipe.conf; or run with -poll", want, want)
	switch {
	case n > limit:
		r.add(CheckFail, name, fix, "the tailer would watch %s, above fs.inotify.max_user_watches %d: changes in the others are seen only by rescans (-rescan)", cli.Count(n, "directory"), limit)
	case n > limit/2:
		r.add(CheckWarn, name, fix, "the tailer would watch %s, more than half of fs.inotify.max_user_watches %d (shared by every program of this user)", cli.Count(n, "directory"), limit)
	default:
		r.ok(name, "the tailer would watch %s of fs.inotify.max_user_watches %d", cli.Count(n, "directory"), limit)
	}
	instances, err := readProcInt(filepath.Join(root, "sys", "fs", "inotify", "max_user_instances"))
	if err != nil {
		r.add(CheckWarn, name, "check that "+root+" is mounted, or run with -poll", "%v", err)
		return
	}
	used := inotifyInstances(root)
	if used >= instances {
		r.add(CheckWarn, name, fmt.Sprintf("sudo sysctl fs.inotify.max_user_instances=%d (and in /etc/sysctl.d), or run with -poll", 2*instances),
			"%d of fs.inotify.max_user_instances %d in use by this user: the tailer would get none and rely on rescans", used, instances)
		return
	}
	r.ok(name, "%d of fs.inotify.max_user_instances %d in use by this user; the tailer needs 1", used, instances)
}

// readProcInt reads a number from a /proc file.
func readProcInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	return n, nil
}

// inotifyInstances counts the inotify instances held by the processes of
// this user: their file descriptors that link to anon_inode:inotify.
func inotifyInstances(root string) int64 {
	procs, _ := os.ReadDir(root)
	var n int64
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil || !p.IsDir() {
			continue
		}
		info, err := p.Info()
		if st, ok := info.Sys().(*syscall.Stat_t); err != nil || !ok || int(st.Uid) != os.Getuid() {
			continue
		}
		fdDir := filepath.Join(root, p.Name(), "fd")
		fds, _ := os.ReadDir(fdDir)
		for _, fd := range fds {
			if l, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && l == "anon_inode:inotify" {
				n++
			}
		}
	}
	return n
}

// checkFileClock warns about transcripts modified in the future, a sign
// of a clock set back (without NATS there is no other clock to ask).
func checkFileClock(r *report, sv *tail.Survey, now time.Time) {
	const name = "clock"
	const slack = 5 * time.Minute
	var future []string
	n := 0
	for _, w := range sv.Watches {
		for _, f := range w.Files {
			n++
			if ahead := f.Info.ModTime().Sub(now); ahead > slack {
				future = append(future, fmt.Sprintf("%s (%s ahead)", f.Path, ahead.Round(time.Second)))
			}
		}
	}
	if len(future) > 0 {
		r.add(CheckWarn, name, "sync the clock: sudo timedatectl set-ntp true (or chronyc makestep)",
			"%d transcripts were modified more than %s in the future: the clock may be behind: %s", len(future), slack, firstFew(future))
		return
	}
	r.ok(name, "no transcript modified in the future (%d looked at; no NATS server to compare with)", n)
}

// Disk space thresholds.
const (
	diskFailBytes = 100 << 20
	diskWarnBytes = 1 << 30
	diskWarnShare = 0.05
)

// checkDisk reports the free space of the file systems of the data,
// Parquet and archive directories.
func (d *Doctor) checkDisk(r *report) {
	const name = "disk"
	seen := make(map[uint64]bool)
	for _, dd := range d.dirs() {
		if !dd.disk {
			continue
		}
		path, err := filepath.Abs(dd.path)
		if err != nil {
			continue // reported by checkDirs
		}
		dir, err := nearestDir(path)
		if err != nil {
			continue // reported by checkDirs
		}
		if info, err := os.Stat(dir); err == nil {
			if id, ok := formats.IDOf(info); ok {
				if seen[id.Dev] {
					continue
				}
				seen[id.Dev] = true
			}
		}
		var st unix.Statfs_t
		if err := unix.Statfs(dir, &st); err != nil {
			r.add(CheckWarn, name, "", "%s %s: statfs %s: %v", dd.what, path, dir, err)
			continue
		}
		free, size := int64(st.Bavail)*int64(st.Bsize), int64(st.Blocks)*int64(st.Bsize)
		share := float64(free) / float64(max(size, 1))
		msg := fmt.Sprintf("%s free of %s (%.0f%%) on the file system of %s %s", cli.HumanBytes(free), cli.HumanBytes(size), 100*share, dd.what, path)
		fix := "free space there, or choose a directory on another file system with " + dd.flag
		switch {
		case free < diskFailBytes:
			r.add(CheckFail, name, fix, "%s", msg)
		case free < diskWarnBytes || share < diskWarnShare:
			r.add(CheckWarn, name, fix, "%s", msg)
		default:
			r.ok(name, "%s", msg)
		}
	}
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// checkListeners reports whether each address the command will listen on
// is free: a port another process holds makes the command fail at start.
func (d *Doctor) checkListeners(r *report) {
	type listener struct{ flag, addr string }
	var ls []listener
	if d.tailer != nil {
		ls = append(ls, listener{"-metrics", d.tailer.Metrics})
	}
	if d.indexer != nil {
		ls = append(ls, listener{"-http", d.indexer.HTTP})
	}
	if d.exporter != nil {
		ls = append(ls, listener{"-metrics", d.exporter.Metrics})
	}
	for _, l := range ls {
		const name = "listen"
		if l.addr == "" {
			continue
		}
		_, port, err := net.SplitHostPort(l.addr)
		if err != nil {
			r.add(CheckFail, name, fmt.Sprintf("give %s as HOST:PORT", l.flag), "%s %s: %v", l.flag, l.addr, err)
			continue
		}
		if port == "0" {
			r.ok(name, "%s %s: any free port", l.flag, l.addr)
			continue
		}
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			r.add(CheckFail, name, fmt.Sprintf("stop what listens there, or give another %s (port 0: any free port)", l.flag),
				"%s %s cannot be used: %v", l.flag, l.addr, err)
			continue
		}
		ln.Close()
		r.ok(name, "%s %s is free", l.flag, l.addr)
	}
}
