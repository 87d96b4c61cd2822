package export

import (
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// recover removes what a crash left below the output root. NewWriter
// calls it holding the directory's LOCK and the manifest lock, with the
// manifest just read, so that:
//
//   - the Writer's temporary files (a part or the manifest being
//     written) belong to no live process: the LOCK excludes another
//     Writer, and the manifest is written only under the manifest lock;
//   - a Parquet file the manifest does not list is a leftover: a part
//     renamed into place but not recorded (its entries were never
//     acknowledged and will be delivered again), the output of a merge
//     not recorded, or an input of a merge already recorded. Nobody is
//     between a rename and its record while the manifest lock is held;
//   - a compaction's temporary files are removed only if no [Compact]
//     runs: recover takes the compaction lock for that, without waiting,
//     and leaves them to the next Compact otherwise.
//
// Files the manifest lists but that are missing are logged, not fatal:
// an operator removed them.
//
// Part files in a directory without a manifest at all are not a crash's
// leftover (a lost manifest, or a directory of another writer): recover
// then removes nothing and returns an error wrapping [ErrManifest].
func (w *Writer) recover(exists bool) error {
	root := w.cfg.Dir
	cl, free, err := tryLockFile(root, CompactLockName)
	if err != nil {
		return err
	}
	defer cl.unlock()
	n, err := removeLeftovers(root, w.manifest, exists, leftovers{writerTemps: true, compactTemps: free}, w.log)
	w.stats.Removed += n
	if err != nil {
		return err
	}
	for _, f := range w.manifest.Files {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(f.Path))); err != nil {
			w.log.Warn("committed file missing", KeyFile, f.Path, KeyError, err.Error())
		}
	}
	return nil
}

// leftovers says which temporary files a clean-up may remove: those of
// the Writer only while holding the directory's LOCK, those of a
// compaction only while holding the compaction lock. The manifest's own
// temporary file and unlisted Parquet files are always removed: the
// clean-up runs under the manifest lock.
type leftovers struct {
	writerTemps  bool
	compactTemps bool
}

// removeLeftovers removes, below root, the temporary files which allows
// and the Parquet files m does not list, and returns how many it
// removed. The caller holds the manifest lock and read m under it;
// exists says whether the manifest file exists. Without one, part files
// are not leftovers but a lost manifest: nothing is removed, and the
// error wraps [ErrManifest].
func removeLeftovers(root string, m *Manifest, exists bool, which leftovers, log *slog.Logger) (int64, error) {
	listed := make(map[string]bool, len(m.Files))
	for _, f := range m.Files {
		listed[f.Path] = true
	}
	var tmps, orphans []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch base := d.Name(); {
		case isTmp(base):
			switch {
			case rel == tmpName(ManifestName):
				tmps = append(tmps, rel)
			case isCompactTmp(base):
				if which.compactTemps {
					tmps = append(tmps, rel)
				}
			case which.writerTemps:
				tmps = append(tmps, rel)
			}
		case isDataName(base) && strings.Count(rel, "/") == 3 && !listed[rel]:
			orphans = append(orphans, rel)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("recover %s: %w", root, err)
	}
	if len(orphans) > 0 && !exists {
		return 0, fmt.Errorf("%w: %s holds %d part files (%s, ...) but no %s: not removing them",
			ErrManifest, root, len(orphans), orphans[0], ManifestName)
	}
	var n int64
	for _, rel := range append(tmps, orphans...) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return n, fmt.Errorf("remove leftover %s: %w", p, err)
		}
		if err := syncDir(filepath.Dir(p)); err != nil {
			return n, err
		}
		n++
		log.Info("removed leftover of an interrupted commit", KeyFile, rel)
	}
	return n, nil
}

// isDataName reports whether base names a committed Parquet file: a
// Writer's part, or a file [Compact] merged.
func isDataName(base string) bool {
	_, _, _, ok := parseDataName(base)
	return ok
}

// parseDataName parses part-<first>-<last>.parquet (generation 0, a
// Writer's part) and part-<first>-<last>-c<gen>.parquet (a merge of
// files of generations below gen).
func parseDataName(base string) (first, last string, gen int, ok bool) {
	s, ok := strings.CutPrefix(base, "part-")
	if !ok {
		return "", "", 0, false
	}
	s, ok = strings.CutSuffix(s, ".parquet")
	if !ok {
		return "", "", 0, false
	}
	first, s, ok = strings.Cut(s, "-")
	if !ok || !isDigits(first) {
		return "", "", 0, false
	}
	last, g, merged := strings.Cut(s, "-c")
	if !isDigits(last) {
		return "", "", 0, false
	}
	if !merged {
		return first, last, 0, true
	}
	if !isDigits(g) || g[0] == '0' || len(g) > 9 {
		return "", "", 0, false
	}
	for i := 0; i < len(g); i++ {
		gen = gen*10 + int(g[i]-'0')
	}
	return first, last, gen, true
}

func isDigits(s string) bool {
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
