package parquet

import (
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/export/internal/commit"
)

// recover removes what a crash left below the output root: what l
// found, scanned before NewWriter took the manifest lock, now that it
// holds it (and the directory's LOCK) with the manifest just read, so
// that:
//
//   - the Writer's temporary files (a part or the manifest being
//     written) belong to no live process: the LOCK excludes another
//     Writer, and the manifest is written only under the manifest lock;
//   - a Parquet file the manifest does not list is a leftover: a part
//     renamed into place but not recorded (its entries were never
//     acknowledged and will be delivered again), the output of a merge
//     not recorded, or an input of a merge already recorded. Nobody is
//     between a rename and its record while the manifest lock is held;
//   - a compaction's temporary files were scanned only if no [Compact]
//     runs: NewWriter holds the compaction lock, taken without waiting,
//     from before the scan, and leaves them to the next Compact if it
//     could not take it.
//
// Files the manifest lists but that are missing are logged, not fatal:
// an operator removed them.
//
// Part files in a directory without a manifest at all are not a crash's
// leftover (a lost manifest, or a directory of another writer): recover
// then removes nothing and returns an error wrapping [ErrManifest].
func (w *Writer) recover(l *leftovers, exists bool) error {
	n, err := l.remove(w.cfg.Dir, w.man.m, exists, w.log)
	w.stats.Removed += n
	if err != nil {
		return err
	}
	for _, f := range w.man.m.Files {
		if _, err := os.Stat(filepath.Join(w.cfg.Dir, filepath.FromSlash(f.Path))); err != nil {
			w.log.Warn("committed file missing", KeyFile, f.Path, KeyError, err.Error())
		}
	}
	return nil
}

// leftovers are the candidates of a clean-up, found by scanLeftovers
// without the manifest lock (a walk of the whole tree may be long) and
// removed by leftovers.remove under it.
type leftovers struct {
	tmps []string // temporary files, relative to the root with slashes
	data []string // Parquet files of partition directories, listed or not
}

// scanLeftovers walks root for temporary files and Parquet files. It
// takes the Writer's temporary files only if writerTemps (the caller
// holds the directory's LOCK), a compaction's only if compactTemps (it
// holds the compaction lock), the manifest's always (it is written only
// under the manifest lock, which remove holds).
func scanLeftovers(root string, writerTemps, compactTemps bool) (*leftovers, error) {
	l := &leftovers{}
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
		case commit.IsTmp(base):
			switch {
			case rel == commit.TmpName(ManifestName):
				l.tmps = append(l.tmps, rel)
			case isCompactTmp(base):
				if compactTemps {
					l.tmps = append(l.tmps, rel)
				}
			case writerTemps:
				l.tmps = append(l.tmps, rel)
			}
		case isDataName(base) && strings.Count(rel, "/") == 3:
			l.data = append(l.data, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("recover %s: %w", root, err)
	}
	return l, nil
}

// remove removes the temporary files of l and its Parquet files that m
// does not list, and returns how many it removed. The caller holds the
// manifest lock and read m under it, so an unlisted Parquet file is a
// leftover (a file scanned before that was listed since is kept);
// exists says whether the manifest file exists. Without one, part files
// are not leftovers but a lost manifest: nothing is removed, and the
// error wraps [ErrManifest].
func (l *leftovers) remove(root string, m *Manifest, exists bool, log *slog.Logger) (int64, error) {
	listed := make(map[string]bool, len(m.Files))
	for _, f := range m.Files {
		listed[f.Path] = true
	}
	var orphans []string
	for _, rel := range l.data {
		if !listed[rel] {
			orphans = append(orphans, rel)
		}
	}
	if len(orphans) > 0 && !exists {
		return 0, fmt.Errorf("%w: %s holds %d part files (%s, ...) but no %s: not removing them",
			ErrManifest, root, len(orphans), orphans[0], ManifestName)
	}
	var n int64
	for _, rel := range append(l.tmps, orphans...) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.Remove(p); os.IsNotExist(err) {
			continue // gone since the scan: a merge's input, or a finished merge's temporary file
		} else if err != nil {
			return n, fmt.Errorf("remove leftover %s: %w", p, err)
		}
		if err := commit.SyncDir(filepath.Dir(p)); err != nil {
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
	if !ok || !commit.IsDigits(first) {
		return "", "", 0, false
	}
	last, g, merged := strings.Cut(s, "-c")
	if !commit.IsDigits(last) {
		return "", "", 0, false
	}
	if !merged {
		return first, last, 0, true
	}
	if !commit.IsDigits(g) || g[0] == '0' || len(g) > 9 {
		return "", "", 0, false
	}
	for i := 0; i < len(g); i++ {
		gen = gen*10 + int(g[i]-'0')
	}
	return first, last, gen, true
}
