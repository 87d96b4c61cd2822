package cli

import (
	"flag"
	"io"
	"time"
)

// A Command is a daemon command: its flags are what the environment, the
// config file, `sessionpipe config` and docs/CONFIG.md know.
type Command struct {
	// Name is the command as typed, without the binary for the ones of
	// cmd/sessionpipe: "run", "tailer", "indexer serve", "exporter serve",
	// "exporter compact".
	Name string
	// Binary is the program the command belongs to: "sessionpipe",
	// "tailer", "indexer" or "exporter".
	Binary string
	// Section is the command's section of the config file: "run",
	// "tailer", "indexer" or "exporter".
	Section string
	// Register adds every flag of the command to fs, with defaults from
	// env; -config is added by [ParseFlags] and [Command.FlagSet].
	Register func(fs *flag.FlagSet, env Env)
}

// Title is the command line that runs the command: "sessionpipe run",
// "tailer", "indexer serve".
func (c Command) Title() string {
	if c.Binary == "sessionpipe" {
		return "sessionpipe " + c.Name
	}
	return c.Name
}

// FlagSet returns a new flag set holding the command's flags, -config
// and the environment variables in their help (see [EnvVar]), with
// defaults from env, printing nothing.
func (c Command) FlagSet(env Env) *flag.FlagSet {
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.Register(fs, env)
	prepare(fs)
	return fs
}

// Commands are the daemon commands, in the order the reference lists
// them.
var Commands = []Command{
	{Name: "run", Binary: "sessionpipe", Section: "run", Register: func(fs *flag.FlagSet, env Env) { new(Run).Register(fs, env) }},
	{Name: "tailer", Binary: "tailer", Section: "tailer", Register: func(fs *flag.FlagSet, env Env) { new(Daemon).Register(fs, env, new(Tailer).Register) }},
	{Name: "indexer serve", Binary: "indexer", Section: "indexer", Register: func(fs *flag.FlagSet, env Env) { new(Daemon).Register(fs, env, new(Indexer).Register) }},
	{Name: "exporter serve", Binary: "exporter", Section: "exporter", Register: func(fs *flag.FlagSet, env Env) { new(Daemon).Register(fs, env, new(Exporter).Register) }},
	{Name: "exporter compact", Binary: "exporter", Section: "exporter", Register: func(fs *flag.FlagSet, env Env) { new(Compact).Register(fs, env) }},
}

// LookupCommand returns the command of Commands named name; "indexer"
// and "exporter" name their serve commands, "compact" the exporter's.
func LookupCommand(name string) (Command, bool) {
	switch name {
	case "indexer", "exporter":
		name += " serve"
	case "compact":
		name = "exporter compact"
	}
	for _, c := range Commands {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// Run holds the flags of `sessionpipe run`: the tailer's, the indexer's
// and the exporter's on one embedded or remote JetStream.
type Run struct {
	NATS     NATS
	Tailer   Tailer
	Indexer  Indexer
	Exporter Exporter
	Logging  Logging
	// Once stops when the files present at start are counted.
	Once bool
	// JSON prints the sessions of -once as JSON.
	JSON bool
	// LiveFirst has the exporter wait while the tailer reads a backlog.
	LiveFirst bool
}

// Register adds the flags of `sessionpipe run` to fs.
func (r *Run) Register(fs *flag.FlagSet, env Env) {
	r.NATS.Register(fs, env)
	r.Tailer.Register(fs, env)
	r.Indexer.register(fs, env, DefaultRunMemoryLimitMiB)
	r.Exporter.RegisterIn(fs, env)
	r.Logging.Register(fs, env)
	fs.BoolVar(&r.Once, "once", false, "stop once the files present at start are counted, and print the sessions")
	fs.BoolVar(&r.JSON, "json", false, "with -once, print a JSON array instead of a table")
	fs.BoolVar(&r.LiveFirst, "live-first", true, "while the tailer is reading (a backfill, a burst of appends), the exporter waits before each pull, up to 10 s at a time, so that the API and the alerts catch up first; not with -once")
}

// Compact holds the flags of `exporter compact`.
type Compact struct {
	NATS        NATS
	Logging     Logging
	Out         string
	MinAge      time.Duration
	TargetBytes int64
	MinFiles    int
	MemoryBytes int64
	DryRun      bool
	Consumer    string
	LockTimeout time.Duration
	// Archive and LeftoverAge: an archive in a bucket whose leftovers are
	// removed too, and how old an unlisted object must be (see
	// parquet.CompactBucket). S3 configures -out/-archive-dir s3://.
	Archive     string
	LeftoverAge time.Duration
	S3          S3
}

// Register adds the flags of `exporter compact` to fs.
func (c *Compact) Register(fs *flag.FlagSet, env Env) {
	c.NATS.Register(fs, env)
	c.Logging.Register(fs, env)
	fs.StringVar(&c.Out, "out", env("SESSIONPIPE_OUT"), "Parquet directory (env SESSIONPIPE_OUT; default <data-dir>/parquet)")
	fs.DurationVar(&c.MinAge, "min-age", DefaultCompactMinAge, "a day's partition is closed this long after the day ended (UTC)")
	fs.Int64Var(&c.TargetBytes, "target-bytes", DefaultCompactTargetBytes, "size of the merged files")
	fs.IntVar(&c.MinFiles, "min-files", DefaultCompactMinFiles, "small files a closed partition needs before it is merged")
	fs.Int64Var(&c.MemoryBytes, "memory-bytes", DefaultCompactMemoryBytes, "memory for the files being merged (more inputs merge in passes)")
	fs.BoolVar(&c.DryRun, "dry-run", false, "say what would be merged, change nothing")
	fs.DurationVar(&c.LockTimeout, "lock-timeout", DefaultCompactLockTimeout, "give up, naming the holder, when the manifest lock (held for milliseconds per exporter commit) is held longer than this: by a stopped or hung exporter")
	fs.StringVar(&c.Consumer, "consumer", orDefault(env("SESSIONPIPE_EXPORTER_CONSUMER"), DefaultExporterConsumer), "the exporter's consumer name: the lease is compact.<name> (env SESSIONPIPE_EXPORTER_CONSUMER)")
	fs.StringVar(&c.Archive, "archive-dir", env("SESSIONPIPE_ARCHIVE_DIR"), "with -out s3://...: the archive's s3://bucket/prefix, whose leftovers are removed too (env SESSIONPIPE_ARCHIVE_DIR)")
	fs.DurationVar(&c.LeftoverAge, "leftover-age", DefaultLeftoverAge, "with -out s3://...: remove an object no manifest lists, or an unfinished multipart upload, once it is this old (sooner when the manifest shows it can never be listed)")
	c.S3.Register(fs, env)
}
