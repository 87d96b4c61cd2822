package main

import (
	"fmt"
	"io"
	"os"

	"github.com/sessionpipe/sessionpipe/cmd/internal/indexcmd"
	"github.com/sessionpipe/sessionpipe/internal/cli"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
)

const versionUsage = `Usage: sessionpipe version [flags]

Prints the version (module version, commit, commit date, Go version), the dates of the embedded price snapshots (LiteLLM's
and models.dev's) and the fingerprint of the price table in use: the
embedded one, or it overridden by -prices FILE (env SESSIONPIPE_PRICES).
The indexer keeps the fingerprint with its state and reprices its history
when it changes.

Flags:
`

func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", versionUsage, stderr)
	prices := fs.String("prices", os.Getenv("SESSIONPIPE_PRICES"), "price file overriding the embedded prices (env SESSIONPIPE_PRICES)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	fmt.Fprintln(stdout, cli.VersionLine("sessionpipe"))
	for _, s := range price.Snapshots() {
		fmt.Fprintf(stdout, "prices %-10s snapshot %s (%s)\n", s.Source, s.Date, s.From)
	}
	table, err := indexcmd.LoadPrices(*prices)
	if err != nil {
		return err
	}
	dated := 0
	for _, p := range table.Prices() {
		if !p.ValidFrom.IsZero() || !p.ValidUntil.IsZero() {
			dated++
		}
	}
	from := "embedded"
	if *prices != "" {
		from = "embedded, overridden by " + *prices
	}
	fmt.Fprintf(stdout, "prices table      %d models, %d dated periods, fingerprint %s (%s)\n", table.Len(), dated, table.Fingerprint(), from)
	return nil
}
