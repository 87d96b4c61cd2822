package commit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// Mkdirs creates the directory rel below root and fsyncs the parent of
// every directory it created; done caches those made. A cached directory
// is checked again (one stat): a user may move a closed partition to cold
// storage while the exporter runs, and a late entry of that day must
// recreate it, not fail every retry. A file in a directory's place is an
// error that names it and says what to do; it concerns the partitions
// below it only (see [PartitionError]).
func Mkdirs(root, rel string, done map[string]bool) error {
	if done[rel] {
		if fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err == nil && fi.IsDir() {
			return nil
		}
		delete(done, rel)
	}
	var parents []string
	for d := rel; d != "."; d = path.Dir(d) {
		parents = append(parents, d)
	}
	for i := len(parents) - 1; i >= 0; i-- {
		d := filepath.Join(root, filepath.FromSlash(parents[i]))
		err := os.Mkdir(d, 0o755)
		if os.IsExist(err) {
			if fi, err := os.Stat(d); err == nil && !fi.IsDir() {
				return fmt.Errorf("create partition directory: %s is a file, not a directory: move it away; the partition's entries are kept until then", d)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("create partition directory: %w", err)
		}
		if err := SyncDir(filepath.Dir(d)); err != nil {
			return err
		}
	}
	done[rel] = true
	return nil
}

func IsDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// AppendLines appends items to data as JSON lines, the form of both
// manifests.
func AppendLines[T any](data []byte, items []T) ([]byte, error) {
	b := bytes.NewBuffer(data)
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	for i := range items {
		if err := enc.Encode(&items[i]); err != nil {
			return nil, fmt.Errorf("encode manifest: %w", err)
		}
	}
	return b.Bytes(), nil
}

// RemoteOpTimeout bounds the requests of opening a writer on a bucket
// (NewWriter takes no context): reading the manifest, creating it.
const RemoteOpTimeout = 2 * time.Minute

// ManifestName is the manifest's file name in the output root, of the
// Parquet files and of the archive segments alike.
const ManifestName = "_manifest.jsonl"

// DefaultPartAge closes a part (or an archive segment) five minutes after
// its first entry arrived, so that a quiet fleet's entries reach Parquet
// (and are acknowledged) within minutes.
const DefaultPartAge = 5 * time.Minute

// IsSegmentName reports whether base is seg-<first>-<last>.jsonl.zst, an
// archive segment's name (compaction cleans a bucket of both kinds).
func IsSegmentName(base string) bool {
	s, ok := strings.CutPrefix(base, "seg-")
	if !ok {
		return false
	}
	if s, ok = strings.CutSuffix(s, ".jsonl.zst"); !ok {
		return false
	}
	x, y, ok := strings.Cut(s, "-")
	return ok && IsDigits(x) && IsDigits(y)
}
