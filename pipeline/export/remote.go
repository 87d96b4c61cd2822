package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
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

// remoteManifest is a manifest object (of the Parquet files or of the
// archive segments) as this process last read or wrote it: its items,
// their encoding and its ETag.
type remoteManifest[T any] struct {
	b      *objstore.Bucket
	name   string
	items  []T
	data   []byte
	etag   string
	exists bool
}

// loadRemoteManifest reads the manifest object name of b; a missing
// object is an empty manifest that does not exist yet.
func loadRemoteManifest[T any](ctx context.Context, b *objstore.Bucket, name string) (*remoteManifest[T], error) {
	rm := &remoteManifest[T]{b: b, name: name}
	return rm, rm.reload(ctx)
}

// reload reads the manifest again.
func (rm *remoteManifest[T]) reload(ctx context.Context) error {
	data, etag, err := rm.b.Get(ctx, rm.name)
	if errors.Is(err, objstore.ErrNotExist) {
		rm.items, rm.data, rm.etag, rm.exists = nil, nil, "", false
		return nil
	}
	if err != nil {
		return fmt.Errorf("read manifest: %w", err)
	}
	items, err := parseLines[T](data, rm.b.ObjectURL(rm.name))
	if err != nil {
		return err
	}
	rm.items, rm.data, rm.etag, rm.exists = items, data, etag, true
	return nil
}

// parseLines decodes a manifest's JSON lines; a line that does not
// decode is an error wrapping [ErrManifest] that names it.
func parseLines[T any](data []byte, name string) ([]T, error) {
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

// committer describes the records of one manifest to commitRemote.
type committer[T any] struct {
	// same reports whether two records are the same commit (path and
	// checksum): a record of ours that the manifest already lists is a
	// write of ours whose answer was lost.
	same func(a, b T) bool
	// overlaps reports whether a listed record and one of ours hold
	// entries in common (one partition, overlapping stream ranges): only
	// a second writer on the prefix lists such a record.
	overlaps func(listed, ours T) bool
	// replace, when set, is a compaction's switch: it returns the new
	// list from the one read, or an error (an input no longer listed).
	replace func(listed []T) ([]T, error)
}

// commit writes the manifest with items added (or c.replace applied)
// by a conditional PUT: If-Match on the ETag read, or If-None-Match: *
// for a manifest that does not exist yet, so that of two processes that
// read the same version only one writes the next. A lost race reads the
// manifest again and tries again, unless what was read lists a record
// that overlaps one of items ([ErrConflict]). A PUT whose fate is
// unknown (it failed after the retries, or its answer was lost) is read
// back: listed, it succeeded; the same version still there, it failed
// (the error is returned, nothing changed); unreadable, the error wraps
// [ErrNotDurable].
func (rm *remoteManifest[T]) commit(ctx context.Context, items []T, c committer[T]) error {
	for race := 0; ; race++ {
		// A record another writer already listed, the same object (same
		// range, same bytes: both read the same stream), is not listed
		// twice.
		var add []T
		for _, o := range items {
			if !slices.ContainsFunc(rm.items, func(l T) bool { return c.same(l, o) }) {
				add = append(add, o)
			}
		}
		// A record listed since this writer opened the part (it learns of
		// another writer's commits only when it reads the manifest) may
		// overlap one of ours, whatever the ETag says.
		if c.replace == nil {
			if err := rm.overlapping(add, c); err != nil {
				return err
			}
		}
		if len(add) == 0 && len(items) > 0 && c.replace == nil {
			return nil
		}
		next := slices.Concat(rm.items, add)
		if c.replace != nil {
			var err error
			if next, err = c.replace(rm.items); err != nil {
				return err
			}
		}
		data, err := appendLines(nil, next)
		if err != nil {
			return err
		}
		cond := objstore.Cond{IfMatch: rm.etag, IfNoneMatch: !rm.exists}
		etag, err := rm.b.Put(ctx, rm.name, data, cond)
		if err == nil {
			rm.items, rm.data, rm.etag, rm.exists = next, data, etag, true
			return nil
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		lost := errors.Is(err, objstore.ErrPrecondition)
		before := rm.etag
		if rerr := rm.reload(ctx); rerr != nil {
			if lost {
				return rerr
			}
			return fmt.Errorf("%w: manifest write %v, then %v", ErrNotDurable, err, rerr)
		}
		if rm.lists(items, c.same) {
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
func (rm *remoteManifest[T]) overlapping(items []T, c committer[T]) error {
	if len(items) == 0 {
		return nil
	}
	for _, l := range rm.items {
		for _, o := range items {
			if c.overlaps(l, o) && !c.same(l, o) {
				return fmt.Errorf("%w: %s lists %+v, overlapping %+v", ErrConflict, rm.b.ObjectURL(rm.name), l, o)
			}
		}
	}
	return nil
}

// lists reports whether the manifest lists every one of items.
func (rm *remoteManifest[T]) lists(items []T, same func(a, b T) bool) bool {
	for _, o := range items {
		if !slices.ContainsFunc(rm.items, func(l T) bool { return same(l, o) }) {
			return false
		}
	}
	return true
}

// fileCommitter is the committer of the Parquet manifest.
var fileCommitter = committer[File]{
	same: func(a, b File) bool { return a.Path == b.Path && a.SHA256 == b.SHA256 },
	overlaps: func(l, o File) bool {
		return l.Partition == o.Partition && l.FirstSeq <= o.LastSeq && o.FirstSeq <= l.LastSeq
	},
}

// segmentCommitter is the committer of the archive manifest.
var segmentCommitter = committer[Segment]{
	same: func(a, b Segment) bool { return a.Path == b.Path && a.SHA256 == b.SHA256 },
	overlaps: func(l, o Segment) bool {
		return l.Partition == o.Partition && l.FirstSeq <= o.LastSeq && o.FirstSeq <= l.LastSeq
	},
}

// createRemoteManifest writes an empty manifest where none exists,
// unless the prefix already holds data objects (a lost manifest, as
// [NewWriter] refuses locally): isData tells them by their base name.
func createRemoteManifest[T any](ctx context.Context, rm *remoteManifest[T], c committer[T], isData func(string) bool) error {
	if rm.exists {
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
	return rm.commit(ctx, nil, c)
}

// uploadFile uploads the local file p as rel.
func uploadFile(ctx context.Context, b *objstore.Bucket, rel, p string, size int64) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return b.Upload(ctx, rel, f, size)
}

// ReadBucketManifest reads the Parquet manifest of an output in a bucket
// (as [ReadManifest] for a directory); none is an empty manifest.
func ReadBucketManifest(ctx context.Context, b *objstore.Bucket) (*Manifest, error) {
	rm, err := loadRemoteManifest[File](ctx, b, ManifestName)
	if err != nil {
		return nil, err
	}
	return &Manifest{Files: rm.items}, nil
}

// ReadBucketArchiveManifest reads the segments listed in an archive in a
// bucket (as [ReadArchiveManifest] for a directory).
func ReadBucketArchiveManifest(ctx context.Context, b *objstore.Bucket) ([]Segment, error) {
	rm, err := loadRemoteManifest[Segment](ctx, b, ManifestName)
	if err != nil {
		return nil, err
	}
	return rm.items, nil
}
