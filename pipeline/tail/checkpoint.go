package tail

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/sessionpipe/sessionpipe/pipeline/internal/fsutil"
	"github.com/sessionpipe/sessionpipe/schema"
)

// checkpointFile is the name of the checkpoint file in the state
// directory.
const checkpointFile = "checkpoints.json"

// checkpointVersion is the version of the checkpoint file format.
// Version 1 files (no check of the bytes before the offset, no
// modification time) are read too, and saved as version 2.
const checkpointVersion = 2

// FileState is the checkpoint of one file: where reading resumes after a
// restart. Offset only ever covers lines whose entries JetStream
// acknowledged.
type FileState struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
	// Fingerprint is a hash of the first FingerprintLen bytes of the
	// file; with Dev and Ino it is the file's identity, which survives
	// renames and tells a rewritten file from the one checkpointed.
	Fingerprint    uint64 `json:"fingerprint"`
	FingerprintLen int    `json:"fingerprint_len"`
	Path           string `json:"path"`
	Offset         int64  `json:"offset"`
	// CheckLen and CheckSum are the length and CRC-32C of the bytes just
	// before Offset (at most 1 KiB, of the lines read, contiguous). A
	// file that no longer holds them there, or that is shorter than
	// Offset, or whose byte before Offset is not a "\n", was rewritten
	// while the tailer was stopped (or the checkpoint was edited): it is
	// read again from its start. Version 1 files have none.
	CheckLen int    `json:"check_len,omitempty"`
	CheckSum uint32 `json:"check_sum,omitempty"`
	// LineAt, LineCheckLen and LineCheckSum check the start of the line
	// ending at Offset when it is longer than the bytes CheckLen covers
	// (two long lines may end alike).
	LineAt       int64         `json:"line_at,omitempty"`
	LineCheckLen int           `json:"line_check_len,omitempty"`
	LineCheckSum uint32        `json:"line_check_sum,omitempty"`
	Format       schema.Format `json:"format,omitempty"`
	// Skipped marks a file that is not a transcript.
	Skipped bool `json:"skipped,omitempty"`
	// Size and MTime (Unix nanoseconds) are the file's at its last read;
	// a skipped file is looked at again when its size moved.
	Size  int64 `json:"size,omitempty"`
	MTime int64 `json:"mtime,omitempty"`
	// Doc is, for a whole-file document, what was published of it and
	// acknowledged; nil for a line file.
	Doc *DocState `json:"doc,omitempty"`
}

// DocState is what a tailer published of a whole-file document: for
// each entry, by its key in the document (entry id and object), the
// XXH3-64 of its canonical JSON without its position (offset, line) and
// time, and the time it was first published with, as last acknowledged.
// A document read again (rewritten, or after a restart) publishes only
// the entries whose digest is not the one here: new ones, and ones whose
// content changed (a message that grew), under their unchanged keys and
// with their first time, so that the consumers, which key an entry and
// a message by id and time, see one entry changing, not two. A state is
// never modified once made: a new version replaces it whole, so states
// compare by pointer.
type DocState struct {
	Entries map[string]DocEntry `json:"entries"`
}

// DocEntry is one published entry of a document: its digest, and its
// time in Unix nanoseconds (0 for none).
type DocEntry struct {
	Sum uint64 `json:"sum"`
	TS  int64  `json:"ts,omitempty"`
}

type checkpointDoc struct {
	Version int         `json:"version"`
	Files   []FileState `json:"files"`
}

// Checkpoints stores the file states of a tailer in a state directory.
// Saves are atomic (temporary file, fsync, rename, fsync of the
// directory): a crash leaves the previous or the new checkpoint, never a
// torn one. It is not safe for concurrent use.
type Checkpoints struct {
	dir string
}

// OpenCheckpoints returns the checkpoint store in dir, creating dir.
func OpenCheckpoints(dir string) (*Checkpoints, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create state directory: %w", err)
	}
	return &Checkpoints{dir: dir}, nil
}

// Path returns the checkpoint file's path.
func (c *Checkpoints) Path() string { return filepath.Join(c.dir, checkpointFile) }

// Load returns the saved states, none if nothing was saved yet; a
// version 1 file is read as version 2 without checks. A file that cannot
// be decoded is a *[CheckpointError] wrapping [ErrCheckpoint] that says
// what to do: the caller must not start from scratch silently, which
// would publish every file again.
func (c *Checkpoints) Load() ([]FileState, error) {
	data, err := os.ReadFile(c.Path())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read checkpoints: %w", err)
	}
	var doc checkpointDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, &CheckpointError{Path: c.Path(), Err: err}
	}
	if doc.Version < 1 || doc.Version > checkpointVersion {
		return nil, &CheckpointError{Path: c.Path(), Err: fmt.Errorf("version %d, this build reads 1 to %d", doc.Version, checkpointVersion)}
	}
	// A state that does not hold together (an offset edited by hand)
	// fails its check against the file: that file is read again.
	return doc.Files, nil
}

// Save replaces the saved states with states, atomically.
func (c *Checkpoints) Save(states []FileState) error {
	states = slices.Clone(states)
	slices.SortFunc(states, func(a, b FileState) int {
		switch {
		case a.Path < b.Path:
			return -1
		case a.Path > b.Path:
			return 1
		}
		return 0
	})
	data, err := json.Marshal(checkpointDoc{Version: checkpointVersion, Files: states})
	if err != nil {
		return fmt.Errorf("encode checkpoints: %w", err)
	}
	return writeAtomic(c.dir, checkpointFile, data)
}

// writeAtomic writes data to dir/name through a synced temporary file and
// a rename, then syncs the directory so that the rename is durable.
func writeAtomic(dir, name string, data []byte) error {
	if err := fsutil.Replace(dir, name, name+".tmp-*", data); err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	if err := fsutil.SyncDir(dir); err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	return nil
}
