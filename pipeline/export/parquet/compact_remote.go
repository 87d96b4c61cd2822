package parquet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/export/archive"
	"github.com/sessionpipe/sessionpipe/pipeline/export/internal/commit"
	"github.com/sessionpipe/sessionpipe/pipeline/export/objstore"
)

// DefaultLeftoverAge is how old an unlisted object or an unfinished
// multipart upload must be before [CompactBucket] removes it, unless the
// manifest shows that it can never be committed: younger, it may be a
// live writer's upload about to be listed.
const DefaultLeftoverAge = time.Hour

// BucketCompactConfig configures [CompactBucket].
type BucketCompactConfig struct {
	CompactConfig // Dir is only the output's name in messages

	// Bucket holds the Parquet output. Required.
	Bucket *objstore.Bucket

	// Archive, when set, is the archive's bucket prefix: its leftovers
	// are removed too (segments are not merged).
	Archive *objstore.Bucket

	// LeftoverAge; default [DefaultLeftoverAge].
	LeftoverAge time.Duration

	// SpoolDir is where inputs are downloaded and the merged file is
	// written before its upload; default os.TempDir().
	SpoolDir string
}

// CompactBucket is [Compact] for an output in a bucket, with the commit
// protocol of a bucket (see the package documentation, "Commit protocol
// in a bucket"). It runs alone on the prefix (`exporter compact -nats`
// holds a lease); exporters may commit meanwhile. First it removes
// leftovers: objects the manifest does not list, once either the
// manifest lists a file (segment) of their partition reaching past their
// range (no writer can list them any more: its commit would overlap; not
// for merged files) or they are older than LeftoverAge, and multipart
// uploads started more than LeftoverAge ago. Then, for each merge, it downloads the inputs,
// merges them locally, uploads the merged file under its final name
// (part-<first>-<last>-c<gen>.parquet), switches the manifest with a
// conditional write that checks every input is still listed with its
// checksum, and deletes the inputs. A crash at any point leaves every
// entry in exactly one listed object; what it left unlisted is a
// leftover of the next run.
func CompactBucket(ctx context.Context, cfg BucketCompactConfig) (CompactStats, error) {
	var st CompactStats
	if cfg.Bucket == nil {
		return st, &ConfigError{Field: "bucket", Value: nil, Err: ErrInvalidConfig, Why: "required"}
	}
	if cfg.Dir == "" {
		cfg.Dir = cfg.Bucket.URL()
	}
	if err := cfg.Validate(); err != nil {
		return st, err
	}
	cfg.CompactConfig = cfg.CompactConfig.withDefaults()
	if cfg.LeftoverAge <= 0 {
		cfg.LeftoverAge = DefaultLeftoverAge
	}
	log := cfg.Logger.With(KeyComponent, "export")
	rm, err := commit.LoadRemoteManifest[File](ctx, cfg.Bucket, ManifestName)
	if err != nil {
		return st, err
	}
	if !rm.Exists {
		return st, nil
	}
	now := time.Now()
	if !cfg.DryRun {
		n, err := cleanBucket(ctx, cfg.Bucket, rm.Items, now.Add(-cfg.LeftoverAge), log)
		st.Removed += n
		if err != nil {
			return st, err
		}
		if cfg.Archive != nil {
			arm, err := commit.LoadRemoteManifest[archive.Segment](ctx, cfg.Archive, ManifestName)
			if err != nil {
				return st, err
			}
			if arm.Exists {
				n, err := cleanBucket(ctx, cfg.Archive, arm.Items, now.Add(-cfg.LeftoverAge), log)
				st.Removed += n
				if err != nil {
					return st, err
				}
			}
		}
	}
	groups := planCompaction(&Manifest{Files: rm.Items}, cfg.closedBefore(now), cfg.CompactConfig)
	if cfg.DryRun {
		for _, g := range groups {
			mg := g.merge()
			mg.RowsOut = mg.RowsIn
			st.add(mg)
		}
		return st, nil
	}
	if len(groups) == 0 {
		return st, nil
	}
	c := &compactor{cfg: cfg.CompactConfig, log: log}
	if c.enc, err = newEncoder(cfg.format().withDefaults()); err != nil {
		return st, err
	}
	for _, g := range groups {
		if err := ctx.Err(); err != nil {
			return st, context.Cause(ctx)
		}
		mg, err := c.mergeRemote(ctx, g, cfg, rm)
		if errors.Is(err, ErrCompactInput) {
			st.Skipped++
			log.Warn("merge skipped", KeyPartition, g.partition.Dir(), KeyError, err.Error())
			continue
		}
		if err != nil {
			return st, err
		}
		st.add(mg)
		log.Info("merged", KeyPartition, g.partition.Dir(), KeyInputs, len(mg.Inputs), KeyFile, mg.Output,
			KeyRows, mg.RowsOut, KeyBytes, mg.BytesOut, KeyDuplicates, mg.RowsIn-mg.RowsOut)
	}
	return st, nil
}

// mergeRemote merges g's objects: downloaded into a spool directory laid
// out as the output, merged there, uploaded, switched in the manifest,
// and the inputs deleted.
func (c *compactor) mergeRemote(ctx context.Context, g compactGroup, cfg BucketCompactConfig, rm *commit.RemoteManifest[File]) (Merge, error) {
	spool, err := os.MkdirTemp(cfg.SpoolDir, "sessionpipe-compact-")
	if err != nil {
		return g.merge(), err
	}
	defer os.RemoveAll(spool)
	if err := os.MkdirAll(g.partition.Path(spool), 0o755); err != nil {
		return g.merge(), err
	}
	for _, f := range g.files {
		data, _, err := cfg.Bucket.Get(ctx, f.Path)
		if errors.Is(err, objstore.ErrNotExist) {
			return g.merge(), fmt.Errorf("%w: %w", ErrCompactInput, err)
		}
		if err != nil {
			return g.merge(), err
		}
		if err := os.WriteFile(filepath.Join(spool, filepath.FromSlash(f.Path)), data, 0o644); err != nil {
			return g.merge(), err
		}
	}
	mg, tmp, out, err := c.build(ctx, g, spool)
	if err != nil {
		return mg, err
	}
	if err := uploadFile(ctx, cfg.Bucket, out.Path, tmp, out.Bytes); err != nil {
		return mg, fmt.Errorf("upload %s: %w", out.Path, err)
	}
	c.step("renamed") // uploaded, not yet listed
	out.Committed = time.Now().UTC()
	sw := fileCommitter
	sw.Replace = func(listed []File) ([]File, error) { return switchInputs(listed, g.files, out) }
	if err := rm.Commit(ctx, []File{out}, sw); err != nil {
		return mg, err
	}
	c.step("recorded")
	for _, f := range g.files {
		if err := cfg.Bucket.Delete(ctx, f.Path); err != nil {
			return mg, fmt.Errorf("delete merged input: %w", err)
		}
	}
	c.step("removed")
	return mg, nil
}

// switchInputs returns listed with inputs replaced by out, added last;
// an input no longer listed with its checksum is an error wrapping
// [ErrCompactInput].
func switchInputs(listed, inputs []File, out File) ([]File, error) {
	gone := make(map[string]string, len(inputs))
	for _, f := range inputs {
		gone[f.Path] = f.SHA256
	}
	files := make([]File, 0, len(listed)+1-len(inputs))
	for _, f := range listed {
		if sum, ok := gone[f.Path]; ok && sum == f.SHA256 {
			delete(gone, f.Path)
			continue
		}
		files = append(files, f)
	}
	for p := range gone {
		return nil, fmt.Errorf("%w: %s and %d other inputs no longer listed", ErrCompactInput, p, len(gone)-1)
	}
	return append(files, out), nil
}

// listedRecord is what cleanBucket needs of a manifest record.
type listedRecord interface{ File | archive.Segment }

// cleanBucket removes the leftovers below b (see [CompactBucket]): the
// data objects listed records do not name, removed when a listed record
// of their partition reaches past their range or when they were last
// modified before cutoff; and the multipart uploads started before
// cutoff. It returns how many it removed.
func cleanBucket[T listedRecord](ctx context.Context, b *objstore.Bucket, records []T, cutoff time.Time, log interface {
	Info(string, ...any)
}) (int64, error) {
	listed := make(map[string]bool, len(records))
	high := map[string]uint64{} // partition directory → highest listed sequence
	for _, r := range records {
		var p string
		var part Partition
		var last uint64
		switch r := any(r).(type) {
		case File:
			p, part, last = r.Path, r.Partition, r.LastSeq
		case archive.Segment:
			p, part, last = r.Path, r.Partition, r.LastSeq
		}
		listed[p] = true
		high[part.Dir()] = max(high[part.Dir()], last)
	}
	var n int64
	for o, err := range b.List(ctx, "format=") {
		if err != nil {
			return n, err
		}
		if listed[o.Key] || strings.Count(o.Key, "/") != 3 {
			continue
		}
		base := path.Base(o.Key)
		_, last, ok := dataRange(base)
		if !ok {
			continue
		}
		// A writer's object reaching no further than what is listed can
		// never be listed. A merged file (-c<gen>) covers only listed
		// ranges by construction: it is left for LeftoverAge, so that a
		// second compactor run by mistake cannot remove one being switched.
		_, _, gen, _ := parseDataName(base)
		covered := gen == 0 && last <= high[path.Dir(o.Key)]
		if !covered && !o.LastModified.Before(cutoff) {
			continue // maybe a live writer's, about to be listed
		}
		if err := b.Delete(ctx, o.Key); err != nil {
			return n, err
		}
		n++
		log.Info("removed leftover of an interrupted commit", KeyFile, o.Key)
	}
	ups, err := b.Uploads(ctx)
	if err != nil {
		return n, err
	}
	for _, u := range ups {
		if u.Initiated.Before(cutoff) {
			if err := b.Abort(ctx, u); err != nil {
				return n, err
			}
			n++
			log.Info("aborted an interrupted multipart upload", KeyFile, u.Key)
		}
	}
	return n, nil
}

// dataRange parses the stream range of a Parquet file's or a segment's
// name.
func dataRange(base string) (first, last uint64, ok bool) {
	var a, z string
	if commit.IsSegmentName(base) {
		s := strings.TrimSuffix(strings.TrimPrefix(base, "seg-"), ".jsonl.zst")
		a, z, _ = strings.Cut(s, "-")
	} else if a, z, _, ok = parseDataName(base); !ok {
		return 0, 0, false
	}
	f, err1 := strconv.ParseUint(a, 10, 64)
	l, err2 := strconv.ParseUint(z, 10, 64)
	return f, l, err1 == nil && err2 == nil
}
