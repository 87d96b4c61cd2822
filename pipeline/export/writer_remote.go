package export

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"time"
)

// remoteOpTimeout bounds the requests of opening a writer on a bucket
// (NewWriter takes no context): reading the manifest, creating it.
const remoteOpTimeout = 2 * time.Minute

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
	ctx, cancel := context.WithTimeout(context.Background(), remoteOpTimeout)
	defer cancel()
	rm, err := loadRemoteManifest[File](ctx, cfg.Bucket, ManifestName)
	if err != nil {
		return nil, err
	}
	if err := createRemoteManifest(ctx, rm, fileCommitter, isDataName); err != nil {
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
	w.man = manifestCopy{m: &Manifest{Files: rm.items}}
	w.high = w.man.m.highest()
	return w, nil
}

// uploadPart encodes pt into a spool file and uploads it under its
// final name, part-<first>-<last>.parquet: a name derived from the
// stream range, so that an upload repeated after a crash writes the same
// bytes (the encoding is deterministic). The object is not committed
// until the manifest lists it (recordRemote); readers follow the
// manifest.
func (w *Writer) uploadPart(ctx context.Context, pt *part) (written, error) {
	rel := pt.partition.Dir()
	name := fmt.Sprintf("part-%d-%d.parquet", pt.first, pt.last)
	spool, err := os.CreateTemp(w.cfg.SpoolDir, tmpPrefix+"sessionpipe-"+name+"-*"+tmpSuffix)
	if err != nil {
		return written{}, fmt.Errorf("create spool file: %w", err)
	}
	tmp := spool.Name()
	spool.Close()
	defer os.Remove(tmp)
	sum, n, err := w.writeTemp(tmp, pt, false)
	if err != nil {
		return written{}, err
	}
	key := path.Join(rel, name)
	if err := uploadFile(ctx, w.cfg.Bucket, key, tmp, n); err != nil {
		return written{}, fmt.Errorf("upload: %w", err)
	}
	f := File{
		Path: key, Partition: pt.partition, Rows: int64(pt.n), Bytes: n, SHA256: sum,
		FirstSeq: pt.first, LastSeq: pt.last, Committed: time.Now().UTC(),
	}
	if pt.minTS != 0 {
		f.MinTS = time.UnixMicro(pt.minTS).UTC()
		f.MaxTS = time.UnixMicro(pt.maxTS).UTC()
	}
	return written{pt: pt, file: f}, nil
}

// recordRemote lists the uploaded files of batch in the manifest with
// one conditional write (see remoteManifest.commit). A conflict with
// another writer, or a write whose fate is unknown, stops the writer
// (see [Writer.failed]); any other failure records nothing, and the
// parts are uploaded again at the next commit.
func (w *Writer) recordRemote(ctx context.Context, batch []written) ([]written, error) {
	files := make([]File, len(batch))
	for i, wr := range batch {
		files[i] = wr.file
	}
	w.step("renamed") // uploaded; nothing to rename
	if err := w.remote.commit(ctx, files, fileCommitter); err != nil {
		if errors.Is(err, ErrConflict) || errors.Is(err, ErrNotDurable) {
			w.fail(err)
		}
		return nil, err
	}
	w.man = manifestCopy{m: &Manifest{Files: w.remote.items}}
	for p, s := range w.man.m.highest() {
		w.high[p] = max(w.high[p], s)
	}
	return batch, nil
}
