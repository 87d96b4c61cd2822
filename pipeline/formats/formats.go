// Package formats decodes transcript files: the one [Decoder] that the
// tailer, the offline commands and the exporter feed a file's lines to
// (format detection from the first lines, never the path; parsing; located
// errors), the OpenClaw session store ([ReadSessionStore]), the files a
// user names ([Walk]: files, directories, globs; regular files only), and
// the parallel reader of the offline commands ([FileReader]), and the
// whole-file JSON documents that agents rewrite on every change
// ([ParseDocument], [ReadDocument]). The parsers live in the sub-packages
// claude, pi, codex, fluux, m4dtimes, trajectory (OpenClaw's run
// trajectories), copilot (GitHub Copilot CLI), grok (Grok Build CLI), qwen
// (Qwen Code), kimi (Kimi CLI) and, for documents, amp, droid and
// codebuff (and gemini's session-*.json); what they
// share is in package parse. Nothing outside this package needs a
// sub-package but parse.
package formats

import (
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Parser turns the lines of one file into normalised entries, keeping the
// per-file state its format needs (session header, split responses,
// cumulative counters). Lines must be given in file order, from the first
// line of the file: a parser resumed mid-file lacks its header state, so
// callers resuming from a checkpoint replay the file from its start with
// the entries discarded up to the checkpoint.
type Parser interface {
	// Format returns the format the parser reads.
	Format() schema.Format

	// Parse appends the entries of one line to dst and returns the
	// extended slice. A line holding several JSON objects yields several
	// entries. On bad input it returns the entries decoded before the
	// fault together with a *schema.DecodeError locating it; the parser
	// stays usable for the next line. Entries never alias line.Bytes.
	Parse(dst []schema.Entry, line jsonl.Line) ([]schema.Entry, error)
}
