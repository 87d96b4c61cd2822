package export

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// recover removes what a crash left below the output root: temporary
// files (a part or a manifest being written), and part files that the
// manifest does not list (renamed into place, but the crash came before
// the manifest recorded them, so their entries were never acknowledged and
// will be delivered again). Files the manifest lists but that are missing
// are logged, not fatal: an operator removed them.
//
// Part files in a directory without a manifest at all are not a crash's
// leftover (a lost manifest, or a directory of another writer): recover
// then removes nothing and returns an error wrapping [ErrManifest].
func (w *Writer) recover() error {
	root := w.cfg.Dir
	listed := make(map[string]bool, len(w.manifest.Files))
	for _, f := range w.manifest.Files {
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
			tmps = append(tmps, rel)
		case isPartName(base) && strings.Count(rel, "/") == 3 && !listed[rel]:
			orphans = append(orphans, rel)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("recover %s: %w", root, err)
	}
	if len(orphans) > 0 && len(w.manifest.Files) == 0 {
		if _, err := os.Stat(filepath.Join(root, ManifestName)); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s holds %d part files (%s, ...) but no %s: not removing them",
				ErrManifest, root, len(orphans), orphans[0], ManifestName)
		}
	}
	for _, rel := range append(tmps, orphans...) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("remove leftover %s: %w", p, err)
		}
		if err := syncDir(filepath.Dir(p)); err != nil {
			return err
		}
		w.stats.Removed++
		w.log.Info("removed leftover of an interrupted commit", KeyFile, rel)
	}
	for rel := range listed {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
			w.log.Warn("committed file missing", KeyFile, rel, KeyError, err.Error())
		}
	}
	return nil
}

// isPartName reports whether base is a part file name,
// part-<first>-<last>.parquet.
func isPartName(base string) bool {
	s, ok := strings.CutPrefix(base, "part-")
	if !ok {
		return false
	}
	s, ok = strings.CutSuffix(s, ".parquet")
	if !ok {
		return false
	}
	a, b, ok := strings.Cut(s, "-")
	return ok && isDigits(a) && isDigits(b)
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
