package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
)

// Daemon is what every daemon command (tailer, indexer serve) parses and
// starts the same way: the NATS and log flags beside the component's own,
// no positional arguments, a logger, a connection.
type Daemon struct {
	NATS    NATS
	Logging Logging
	Log     *slog.Logger // set by Parse
	Config  *Config      // set by Parse: every flag's value and its source
	// Usage, when set, is what -h prints before the flags: what the
	// command does and an example, ending with "Flags:\n".
	Usage string
}

// Register adds the shared flags and the component's (own) to fs.
func (d *Daemon) Register(fs *flag.FlagSet, env Env, own func(*flag.FlagSet, Env)) {
	d.NATS.Register(fs, env)
	own(fs, env)
	d.Logging.Register(fs, env)
}

// Parse registers the shared flags and the component's (own), parses
// args, then the environment and the config file ([ParseFlags]), and
// builds the logger. name is the command ([Commands]). Positional
// arguments are refused, with hint (say where such values belong) when
// given. The error of -h is flag.ErrHelp.
func (d *Daemon) Parse(name string, args []string, env Env, stderr io.Writer, own func(*flag.FlagSet, Env), hint string) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	if d.Usage != "" {
		fs.Usage = func() {
			fmt.Fprint(stderr, d.Usage)
			fs.PrintDefaults()
		}
	}
	d.Register(fs, env, own)
	cfg, err := ParseFlags(fs, name, args, env)
	if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		if hint != "" {
			return fmt.Errorf("unexpected arguments %q (%s)", fs.Args(), hint)
		}
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	log, err := d.Logging.Logger(stderr)
	if err != nil {
		return err
	}
	d.Log = log
	d.Config = cfg
	return nil
}

// Connect reaches JetStream as the client named client (a NATS URL, or
// the embedded server under the data directory) and makes sure the
// stream exists. Close the Bus when done.
func (d *Daemon) Connect(ctx context.Context, client string) (*Bus, error) {
	return d.NATS.Connect(ctx, client, d.Log)
}
