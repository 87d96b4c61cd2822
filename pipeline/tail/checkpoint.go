package tail

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/sessionpipe/sessionpipe/schema"
)

// checkpointFile is the name of the checkpoint file in the state
// directory.
const checkpointFile = "checkpoints.json"

// checkpointVersion is the version of the checkpoint file format.
const checkpointVersion = 1

// FileState is the checkpoint of one file: where reading resumes after a
// restart. Offset only ever covers lines whose entries JetStream
// acknowledged.
type FileState struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
	// Fingerprint is a hash of the first FingerprintLen bytes of the
	// file; with Dev and Ino it is the file's identity, which survives
	// renames and tells a rewritten file from the one checkpointed.
	Fingerprint    uint64        `json:"fingerprint"`
	FingerprintLen int           `json:"fingerprint_len"`
	Path           string        `json:"path"`
	Offset         int64         `json:"offset"`
	Format         schema.Format `json:"format,omitempty"`
	// Skipped marks a file that is not a transcript, with the size at
	// which that was decided.
	Skipped bool  `json:"skipped,omitempty"`
	Size    int64 `json:"size,omitempty"`
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

// Load returns the saved states, none if nothing was saved yet. A file
// that cannot be decoded is an error wrapping [ErrCheckpoint]: the caller
// must not start from scratch silently, which would re-read everything.
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
		return nil, fmt.Errorf("%w: %s: %v", ErrCheckpoint, c.Path(), err)
	}
	if doc.Version != checkpointVersion {
		return nil, fmt.Errorf("%w: %s: version %d, want %d", ErrCheckpoint, c.Path(), doc.Version, checkpointVersion)
	}
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
func writeAtomic(dir, name string, data []byte) (err error) {
	tmp, err := os.CreateTemp(dir, name+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temporary checkpoint: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("sync checkpoint: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("close checkpoint: %w", err)
	}
	if err = os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("rename checkpoint: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open state directory: %w", err)
	}
	defer d.Close()
	if err = d.Sync(); err != nil {
		return fmt.Errorf("sync state directory: %w", err)
	}
	return nil
}
