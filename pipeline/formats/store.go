package formats

import (
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/pi"
	"github.com/sessionpipe/sessionpipe/schema"
)

// SessionsJSON is the name of the OpenClaw (clawdbot, Nexus) session
// store, read beside pi transcripts for session metadata.
const SessionsJSON = "sessions.json"

// IsSessionStore reports whether path names an OpenClaw session store.
func IsSessionStore(path string) bool { return filepath.Base(path) == SessionsJSON }

// MaxSessionStoreBytes is the largest session store [ReadSessionStore]
// reads; a real one holds a few hundred sessions in well under 1 MB.
const MaxSessionStoreBytes = 64 << 20

// ReadSessionStore reads an OpenClaw sessions.json store, a snapshot that
// the gateway rewrites in place, and returns one Kind session entry
// (Subtype "sessions.json", no usage: the store's counters must not be
// added to the transcripts') per session, sorted by session id; Path and
// Host come from cfg. It reads at most MaxSessionStoreBytes. A store that
// is not a JSON object is an error with no entries; entries that cannot
// be decoded are left out and named in the returned error, together with
// the entries that could be read.
func ReadSessionStore(r io.Reader, cfg parse.Config) ([]schema.Entry, error) {
	metas, err := pi.ReadSessionsJSON(io.LimitReader(r, MaxSessionStoreBytes))
	entries := make([]schema.Entry, 0, len(metas))
	for _, m := range metas {
		entries = append(entries, m.Entry(cfg.Host, cfg.Path))
	}
	slices.SortFunc(entries, func(a, b schema.Entry) int { return strings.Compare(a.SessionID, b.SessionID) })
	if err != nil && cfg.Path != "" {
		err = &fs.PathError{Op: "read", Path: cfg.Path, Err: err}
	}
	return entries, err
}
