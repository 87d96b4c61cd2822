package commit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/sessionpipe/sessionpipe/pipeline/export/objstore"
)

// Object storage has no rename and no lock: see the package
// documentation, "Commit protocol in a bucket". This file holds what the
// Writer and the ArchiveWriter share there: the manifest object, read
// with its ETag and replaced only by a conditional PUT.

// maxManifestRaces bounds how many times in a row a commit re-reads the
// manifest after losing its conditional write to another process (a
// compaction, or a second exporter on the prefix) before it gives up and
// returns the error (the commit is retried at the next interval).
const maxManifestRaces = 50

// RemoteManifest is a manifest object (of the Parquet files or of the
// archive segments) as this process last read or wrote it: its items,
// their encoding and its ETag.
type RemoteManifest[T any] struct {
	b      *objstore.Bucket
	name   string
	Items  []T // the records listed
	data   []byte
	etag   string
	Exists bool // whether the object exists
}

// LoadRemoteManifest reads the manifest object name of b; a missing
// object is an empty manifest that does not exist yet.
func LoadRemoteManifest[T any](ctx context.Context, b *objstore.Bucket, name string) (*RemoteManifest[T], error) {
	rm := &RemoteManifest[T]{b: b, name: name}
	return rm, rm.Reload(ctx)
}

// Reload reads the manifest again.
func (rm *RemoteManifest[T]) Reload(ctx context.Context) error {
	data, etag, err := rm.b.Get(ctx, rm.name)
	if errors.Is(err, objstore.ErrNotExist) {
		rm.Items, rm.data, rm.etag, rm.Exists = nil, nil, "", false
		return nil
	}
	if err != nil {
		return fmt.Errorf("read manifest: %w", err)
	}
	items, err := ParseLines[T](data, rm.b.ObjectURL(rm.name))
	if err != nil {
		return err
	}
	rm.Items, rm.data, rm.etag, rm.Exists = items, data, etag, true
	return nil
}

// ParseLines decodes a manifest's JSON lines; a line that does not
// decode is an error wrapping [ErrManifest] that names it.
func ParseLines[T any](data []byte, name string) ([]T, error) {
	var items []T
	for n, line := range bytes.Split(data, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var it T
		if err := json.Unmarshal(line, &it); err != nil {
			return nil, fmt.Errorf("%w: %s:%d: %v", ErrManifest, name, n+1, err)
		}
		items = append(items, it)
	}
	return items, nil
}

// Committer describes the records of one manifest to commitRemote.
type Committer[T any] struct {
	// Same reports whether two records are the same commit (path and
	// checksum): a record of ours that the manifest already lists is a
	// write of ours whose answer was lost.
	Same func(a, b T) bool
	// Overlaps reports whether a listed record and one of ours hold
	// entries in common (one partition, overlapping stream ranges): only
	// a second writer on the prefix lists such a record.
	Overlaps func(listed, ours T) bool
	// Replace, when set, is a compaction's switch: it returns the new
	// list from the one read, or an error (an input no longer listed).
	Replace func(listed []T) ([]T, error)
}

// Commit writes the manifest with items added (or c.Replace applied)
// by a conditional PUT: If-Match on the ETag read, or If-None-Match: *
// for a manifest that does not exist yet, so that of two processes that
// read the same version only one writes the next. A lost race reads the
// manifest again and tries again, unless what was read lists a record
// that overlaps one of items ([ErrConflict]). A PUT whose fate is
// unknown (it failed after the retries, or its answer was lost) is read
// back: listed, it succeeded; the same version still there, it failed
// (the error is returned, nothing changed); unreadable, the error wraps
// [ErrNotDurable].
func (rm *RemoteManifest[T]) Commit(ctx context.Context, items []T, c Committer[T]) error {
	for race := 0; ; race++ {
		// A record another writer already listed, the same object (same
		// range, same bytes: both read the same stream), is not listed
		// twice.
		var add []T
		for _, o := range items {
			if !slices.ContainsFunc(rm.Items, func(l T) bool { return c.Same(l, o) }) {
				add = append(add, o)
			}
		}
		// A record listed since this writer opened the part (it learns of
		// another writer's commits only when it reads the manifest) may
		// overlap one of ours, whatever the ETag says.
		if c.Replace == nil {
			if err := rm.overlapping(add, c); err != nil {
				return err
			}
		}
		if len(add) == 0 && len(items) > 0 && c.Replace == nil {
			return nil
		}
		next := slices.Concat(rm.Items, add)
		if c.Replace != nil {
			var err error
			if next, err = c.Replace(rm.Items); err != nil {
				return err
			}
		}
		data, err := AppendLines(nil, next)
		if err != nil {
			return err
		}
		cond := objstore.Cond{IfMatch: rm.etag, IfNoneMatch: !rm.Exists}
		etag, err := rm.b.Put(ctx, rm.name, data, cond)
		if err == nil {
			rm.Items, rm.data, rm.etag, rm.Exists = next, data, etag, true
			return nil
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		lost := errors.Is(err, objstore.ErrPrecondition)
		before := rm.etag
		if rerr := rm.Reload(ctx); rerr != nil {
			if lost {
				return rerr
			}
			return fmt.Errorf("%w: manifest write %v, then %v", ErrNotDurable, err, rerr)
		}
		if rm.lists(items, c.Same) {
			return nil // ours: a retried PUT whose first attempt succeeded
		}
		if !lost && rm.etag == before {
			return fmt.Errorf("write manifest: %w", err) // not written: retry later
		}
		if race >= maxManifestRaces {
			return fmt.Errorf("write manifest: lost the conditional write %d times in a row: %w", race+1, err)
		}
	}
}

// overlapping returns an error wrapping [ErrConflict] if the manifest
// lists a record, other than one of items, that holds entries of one of
// them.
func (rm *RemoteManifest[T]) overlapping(items []T, c Committer[T]) error {
	if len(items) == 0 {
		return nil
	}
	for _, l := range rm.Items {
		for _, o := range items {
			if c.Overlaps(l, o) && !c.Same(l, o) {
				return fmt.Errorf("%w: %s lists %+v, overlapping %+v", ErrConflict, rm.b.ObjectURL(rm.name), l, o)
			}
		}
	}
	return nil
}

// lists reports whether the manifest lists every one of items.
func (rm *RemoteManifest[T]) lists(items []T, same func(a, b T) bool) bool {
	for _, o := range items {
		if !slices.ContainsFunc(rm.Items, func(l T) bool { return same(l, o) }) {
			return false
		}
	}
	return true
}

// CreateRemoteManifest writes an empty manifest where none exists,
// unless the prefix already holds data objects (a lost manifest, as
// [NewWriter] refuses locally): isData tells them by their base name.
func CreateRemoteManifest[T any](ctx context.Context, rm *RemoteManifest[T], c Committer[T], isData func(string) bool) error {
	if rm.Exists {
		return nil
	}
	for o, err := range rm.b.List(ctx, "format=") {
		if err != nil {
			return err
		}
		if isData(objstore.Base(o.Key)) {
			return fmt.Errorf("%w: %s holds %s but no %s: not writing into it", ErrManifest, rm.b.URL(), o.Key, rm.name)
		}
	}
	return rm.Commit(ctx, nil, c)
}
