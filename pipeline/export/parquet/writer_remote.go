package parquet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"sync"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/export/internal/commit"
)

// newRemoteWriter opens a Writer on cfg.Bucket: it reads the manifest
// (creating an empty one where the prefix holds nothing) and takes no
// lock: two writers on one prefix are kept apart by the manifest's
// conditional write ([ErrConflict] for the loser). Leftovers of a crash
// (objects uploaded and never listed, multipart uploads never
// completed) are not removed here, where a live writer's upload cannot
// be told from a dead one's: [CompactBucket] removes them.
func newRemoteWriter(cfg Config) (*Writer, error) {
	enc, err := newEncoder(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), commit.RemoteOpTimeout)
	defer cancel()
	rm, err := commit.LoadRemoteManifest[File](ctx, cfg.Bucket, ManifestName)
	if err != nil {
		return nil, err
	}
	if err := commit.CreateRemoteManifest(ctx, rm, fileCommitter, isDataName); err != nil {
		return nil, err
	}
	w := &Writer{
		cfg:    cfg,
		log:    cfg.Logger.With(KeyComponent, "export"),
		enc:    enc,
		parts:  make(map[Partition]*part),
		dirs:   make(map[string]bool),
		remote: rm,
	}
	w.man = manifestCopy{m: &Manifest{Files: rm.Items}}
	w.high = w.man.m.highest()
	return w, nil
}

// uploadConcurrency is how many parts one commit uploads at once: a
// commit of many quiet partitions (a backfill) waits for the bucket's
// latency once per few files, not once per file.
const uploadConcurrency = 8

// upload encodes each of c's parts into a spool file, in order, then uploads
// them (uploadConcurrency at a time) under their final names,
// part-<first>-<last>.parquet: names derived from the stream ranges, so
// that an upload repeated after a crash writes the same bytes (the
// encoding is deterministic). An object is not committed until the
// manifest lists it (recordRemote); readers follow the manifest. As in
// the local commit, a part that fails costs its partition: its later
// parts are left out of the batch (those already uploaded are leftovers
// for [CompactBucket]), and a *[PartitionError] is returned for it.
func (c *Commit) upload(ctx context.Context) []written {
	w := c.w
	type job struct {
		wr    written
		spool string
		err   error
	}
	var jobs []*job
	var errs []error
	failed := make(map[Partition]bool)
	defer func() {
		for _, j := range jobs {
			os.Remove(j.spool)
		}
	}()
	for _, pt := range c.parts {
		if err := ctx.Err(); err != nil {
			errs = append(errs, context.Cause(ctx))
			break
		}
		if failed[pt.partition] {
			continue
		}
		wr, spool, err := w.spoolPart(pt)
		if err != nil {
			failed[pt.partition] = true
			errs = append(errs, c.partitionFailed(pt, err))
			continue
		}
		jobs = append(jobs, &job{wr: wr, spool: spool})
	}
	sem := make(chan struct{}, uploadConcurrency)
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := uploadFile(ctx, w.cfg.Bucket, j.wr.file.Path, j.spool, j.wr.file.Bytes); err != nil {
				j.err = fmt.Errorf("upload: %w", err)
			}
		})
	}
	wg.Wait()
	var batch []written
	for _, j := range jobs {
		pt := j.wr.pt
		if failed[pt.partition] {
			continue
		}
		if j.err != nil {
			failed[pt.partition] = true
			errs = append(errs, c.partitionFailed(pt, j.err))
			continue
		}
		batch = append(batch, j.wr)
		w.step("written")
	}
	c.errs = append(c.errs, errs...)
	return batch
}

// spoolPart encodes pt into a spool file and describes the object it
// becomes.
func (w *Writer) spoolPart(pt *part) (written, string, error) {
	rel := pt.partition.Dir()
	name := fmt.Sprintf("part-%d-%d.parquet", pt.first, pt.last)
	spool, err := os.CreateTemp(w.cfg.SpoolDir, commit.TmpPrefix+"sessionpipe-"+name+"-*"+commit.TmpSuffix)
	if err != nil {
		return written{}, "", fmt.Errorf("create spool file: %w", err)
	}
	tmp := spool.Name()
	spool.Close()
	sum, n, err := w.writeTemp(tmp, pt, false)
	if err != nil {
		os.Remove(tmp)
		return written{}, "", err
	}
	f := File{
		Path: path.Join(rel, name), Partition: pt.partition, Rows: int64(pt.n), Bytes: n, SHA256: sum,
		FirstSeq: pt.first, LastSeq: pt.last, Committed: time.Now().UTC(),
	}
	if pt.minTS != 0 {
		f.MinTS = time.UnixMicro(pt.minTS).UTC()
		f.MaxTS = time.UnixMicro(pt.maxTS).UTC()
	}
	return written{pt: pt, file: f}, tmp, nil
}

// recordRemote lists the uploaded files of batch in the manifest with
// one conditional write (see remoteManifest.commit). A conflict with
// another writer, or a write whose fate is unknown, stops the writer
// (see [Writer.failed]); any other failure records nothing, and the
// parts are uploaded again at the next commit.
func (c *Commit) recordRemote(ctx context.Context, batch []written) ([]written, error) {
	w := c.w
	files := make([]File, len(batch))
	for i, wr := range batch {
		files[i] = wr.file
	}
	w.step("renamed") // uploaded; nothing to rename
	if err := w.remote.Commit(ctx, files, fileCommitter); err != nil {
		if errors.Is(err, ErrConflict) || errors.Is(err, ErrNotDurable) {
			c.stop = err
		}
		return nil, err
	}
	w.man = manifestCopy{m: &Manifest{Files: w.remote.Items}}
	c.high = w.man.m.highest()
	return batch, nil
}
