package parquet

import (
	"bufio"
	"cmp"
	"container/heap"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/sessionpipe/sessionpipe/schema"
)

// The merge of Compact: the inputs' sorted rows read, merged and written
// as one file.

// build writes the merged file of g's files, found under root, to a
// synced temporary file in their partition's directory, and describes
// it.
func (c *compactor) build(ctx context.Context, g compactGroup, root string) (mg Merge, tmp string, out File, err error) {
	mg = g.merge()
	dir := g.partition.Path(root)
	name := path.Base(mg.Output)
	tmp = filepath.Join(dir, compactTmpName(name))
	first, last := g.span()
	meta := mergeMeta{partition: g.partition, first: first, last: last}

	// Check every input first (size, rows, schema), and estimate what its
	// reader costs; a merge opens its inputs only when it reads them.
	inputs := make([]mergeInput, 0, len(g.files))
	for _, f := range g.files {
		in := mergeInput{path: filepath.Join(root, filepath.FromSlash(f.Path)), bytes: f.Bytes, rows: f.Rows}
		s, err := openMergeSource(in, c.cfg)
		if err != nil {
			return mg, "", out, err
		}
		in.cost = s.cost
		s.close()
		inputs = append(inputs, in)
	}
	var temps []string // intermediate files, removed when merged or on error
	defer func() {
		for _, p := range temps {
			os.Remove(p)
		}
	}()
	// Merge in passes while the inputs' readers would not fit in memory:
	// the first ones that fit (two at least) into an intermediate file,
	// which goes last.
	for pass := 1; len(inputs) > 2 && inputsCost(inputs) > c.cfg.MemoryBytes; pass++ {
		k := 2
		for k < len(inputs) && inputsCost(inputs[:k+1]) <= c.cfg.MemoryBytes {
			k++
		}
		run := mergeInput{path: filepath.Join(dir, compactTmpName(fmt.Sprintf("pass%d-%s", pass, name))), temp: true}
		temps = append(temps, run.path)
		res, err := c.mergeInto(ctx, run.path, inputs[:k], meta)
		if err != nil {
			return mg, "", out, err
		}
		c.step("pass")
		run.bytes, run.rows = res.bytes, res.rows
		s, err := openMergeSource(run, c.cfg)
		if err != nil {
			return mg, "", out, err
		}
		run.cost = s.cost
		s.close()
		inputs = append(inputs[k:], run)
	}
	res, err := c.mergeInto(ctx, tmp, inputs, meta)
	if err != nil {
		os.Remove(tmp)
		return mg, "", out, err
	}
	c.step("written")
	mg.RowsOut, mg.BytesOut = res.rows, res.bytes
	out = File{
		Path:      mg.Output,
		Partition: g.partition,
		Rows:      res.rows,
		Bytes:     res.bytes,
		SHA256:    res.sum,
		FirstSeq:  first,
		LastSeq:   last,
	}
	if res.minTS != 0 {
		out.MinTS = time.UnixMicro(res.minTS).UTC()
		out.MaxTS = time.UnixMicro(res.maxTS).UTC()
	}
	return mg, tmp, out, nil
}

// mergeInput is a file to merge: an input of the merge, or an
// intermediate file of a merge in passes.
type mergeInput struct {
	path  string
	bytes int64 // its size and rows, as the manifest says
	rows  int64
	cost  int64 // what its reader holds, as estimated
	temp  bool  // an intermediate file: removed once merged
}

// inputsCost returns the memory the readers of ins hold, as estimated.
func inputsCost(ins []mergeInput) int64 {
	var n int64
	for _, in := range ins {
		n += in.cost
	}
	return n
}

// mergeInto opens ins and merges them into the file path (see
// compactor.write); intermediate files among ins are removed once
// merged.
func (c *compactor) mergeInto(ctx context.Context, path string, ins []mergeInput, meta mergeMeta) (mergeResult, error) {
	srcs := make([]*mergeSource, 0, len(ins))
	defer func() {
		for _, s := range srcs {
			s.close()
		}
	}()
	for _, in := range ins {
		s, err := openMergeSource(in, c.cfg)
		if err != nil {
			return mergeResult{}, err
		}
		srcs = append(srcs, s)
	}
	res, err := c.write(ctx, path, srcs, meta)
	if err != nil {
		return res, err
	}
	for _, s := range srcs {
		s.close()
		if s.temp {
			os.Remove(s.path)
		}
	}
	return res, nil
}

// mergeMeta is what a file's key-value metadata says beside the schema
// version and the writer.
type mergeMeta struct {
	partition   Partition
	first, last uint64
}

// mergeResult describes a file written by compactor.write.
type mergeResult struct {
	rows, bytes  int64
	sum          string
	minTS, maxTS int64
}

// write merges the rows of srcs, each sorted by (session_id, ts, seq),
// into the file path, sorted the same way, keeping the first row (lowest
// seq) of each key among the rows with the same session_id and ts, and
// syncs it.
func (c *compactor) write(ctx context.Context, path string, srcs []*mergeSource, meta mergeMeta) (mergeResult, error) {
	var res mergeResult
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return res, fmt.Errorf("create %s: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(f, h)}
	if c.buf == nil {
		c.buf = bufio.NewWriterSize(cw, 1<<20)
	} else {
		c.buf.Reset(cw)
	}
	enc := c.enc
	enc.pw = parquet.NewGenericWriter[row](c.buf, partWriterOptions(enc.cfg, enc.codec)...)
	defer func() { enc.pw = nil; clear(enc.batch); enc.batch = enc.batch[:0] }()
	for _, kv := range [...][2]string{
		{MetaSchemaVersion, strconv.Itoa(schema.Version)},
		{MetaFirstSeq, strconv.FormatUint(meta.first, 10)},
		{MetaLastSeq, strconv.FormatUint(meta.last, 10)},
		{MetaFormat, meta.partition.Format},
		{MetaDate, meta.partition.Date},
		{MetaHost, meta.partition.Host},
		{MetaWriter, enc.cfg.WriterVersion},
	} {
		enc.pw.SetKeyValueMetadata(kv[0], kv[1])
	}

	q := make(mergeQueue, 0, len(srcs))
	for _, s := range srcs {
		ok, err := s.next()
		if err != nil {
			return res, err
		}
		if ok {
			q = append(q, s)
		}
	}
	heap.Init(&q)
	// The keys of the rows written with the current (session_id, ts):
	// the copies of an entry are among them.
	var (
		session string
		ts      int64
		keys    = make(map[string]struct{})
		n       int
	)
	for len(q) > 0 {
		s := q[0]
		r := &s.buf[s.i]
		if r.SessionID != session || r.tsKey() != ts || res.rows == 0 {
			session, ts = r.SessionID, r.tsKey()
			clear(keys)
		}
		if _, dup := keys[r.Key]; !dup {
			keys[r.Key] = struct{}{}
			enc.batch = append(enc.batch, *r)
			res.rows++
			if ts := r.tsKey(); ts != 0 {
				if res.minTS == 0 || ts < res.minTS {
					res.minTS = ts
				}
				res.maxTS = max(res.maxTS, ts)
			}
			if len(enc.batch) == cap(enc.batch) {
				if err := enc.flush(); err != nil {
					return res, err
				}
			}
		}
		if n++; n%writeBatch == 0 {
			if err := ctx.Err(); err != nil {
				return res, context.Cause(ctx)
			}
		}
		s.i++
		ok, err := s.next()
		if err != nil {
			return res, err
		}
		if ok {
			heap.Fix(&q, 0)
		} else {
			heap.Pop(&q)
		}
	}
	if err := enc.flush(); err != nil {
		return res, err
	}
	if err := enc.pw.Close(); err != nil {
		return res, fmt.Errorf("close parquet writer: %w", err)
	}
	err = c.buf.Flush()
	if err == nil {
		err = f.Sync()
	}
	if e := f.Close(); err == nil {
		err = e
	}
	if err != nil {
		return res, fmt.Errorf("write %s: %w", path, err)
	}
	res.bytes, res.sum = cw.n, hex.EncodeToString(h.Sum(nil))
	return res, nil
}

// partWriterOptions returns the Parquet writer options of every file the
// package writes, parts (encoder.encode) and merged files alike, so that
// a merged file differs from a part in nothing but its rows:
// TestCompact_SameAsWriter checks that it is byte for byte the part a
// Writer writes from the same entries.
func partWriterOptions(cfg Config, codec *codec) []parquet.WriterOption {
	opts := []parquet.WriterOption{
		parquet.Compression(codec),
		parquet.MaxRowsPerRowGroup(cfg.RowGroupRows),
		parquet.PageBufferSize(cfg.PageBytes),
		parquet.DataPageStatistics(true),
		parquet.ColumnIndexSizeLimit(func([]string) int { return statsBytes }),
		parquet.CreatedBy(cfg.WriterVersion, "", ""),
		parquet.SortingWriterConfig(parquet.SortingColumns(
			parquet.Ascending("session_id"),
			parquet.NullsFirst(parquet.Ascending("ts")),
			parquet.Ascending("seq"),
		)),
	}
	for _, path := range blobColumns() {
		opts = append(opts, parquet.SkipPageBounds(path...), parquet.SkipPageStatistics(path...))
	}
	return opts
}

// mergeSource is a sorted Parquet file being merged: its rows are read a
// buffer at a time.
type mergeSource struct {
	path string
	temp bool // an intermediate file of a merge in passes
	f    *os.File
	r    *parquet.GenericReader[row]
	cost int64 // estimate of the memory its reader holds
	rows int64 // rows it must yield
	read int64 // rows read
	buf  []row
	i    int // next row of buf

	// The last row read, to check the order.
	session  string
	ts, seq  int64
	anything bool
}

// Buffered rows of a mergeSource: as many as fit in mergeRowBytes, within
// these bounds.
const (
	mergeRowBytes   = 1 << 20
	minMergeRows    = 16
	maxMergeRows    = 1024
	mergeReadBuffer = 16 << 10 // read buffer of each column chunk
)

// openMergeSource opens the Parquet file of in, which must have the size
// and rows in says and the schema and schema version of this package. An
// unusable file is an error wrapping [ErrCompactInput].
func openMergeSource(in mergeInput, cfg CompactConfig) (*mergeSource, error) {
	f, err := os.Open(in.path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCompactInput, err)
	}
	s := &mergeSource{path: in.path, temp: in.temp, f: f, rows: in.rows}
	if err := s.open(in.bytes, cfg); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s: %v", ErrCompactInput, in.path, err)
	}
	return s, nil
}

// open checks the file against its size, rows, schema and schema
// version, estimates what its reader costs and opens the reader.
func (s *mergeSource) open(size int64, cfg CompactConfig) (err error) {
	info, err := s.f.Stat()
	if err != nil {
		return err
	}
	if info.Size() != size {
		return fmt.Errorf("%d bytes, the manifest says %d", info.Size(), size)
	}
	pf, err := parquet.OpenFile(s.f, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true),
		parquet.ReadBufferSize(mergeReadBuffer))
	if err != nil {
		return err
	}
	if v, _ := pf.Lookup(MetaSchemaVersion); v != strconv.Itoa(schema.Version) {
		return fmt.Errorf("schema version %q, not %d", v, schema.Version)
	}
	if !parquet.EqualNodes(pf.Schema(), partSchema) {
		return errors.New("not the schema of this writer")
	}
	if pf.NumRows() != s.rows {
		return fmt.Errorf("%d rows, the manifest says %d", pf.NumRows(), s.rows)
	}
	// Its reader holds, per column, a page and its compressed form; the
	// buffered rows add their size.
	md := pf.Metadata()
	avg := int64(unsafe.Sizeof(row{}))
	var pages []int64
	for _, rg := range md.RowGroups {
		if rg.NumRows > 0 {
			avg = max(avg, int64(unsafe.Sizeof(row{}))+rg.TotalByteSize/rg.NumRows)
		}
		if pages == nil {
			pages = make([]int64, len(rg.Columns))
		}
		for i, cc := range rg.Columns {
			if i < len(pages) {
				page := min(cc.MetaData.TotalUncompressedSize, int64(cfg.PageBytes)) + min(cc.MetaData.TotalCompressedSize, int64(cfg.PageBytes))
				pages[i] = max(pages[i], page)
			}
		}
	}
	n := min(max(mergeRowBytes/avg, minMergeRows), maxMergeRows)
	s.cost = n*avg + mergeReadBuffer*int64(len(pages))
	for _, p := range pages {
		s.cost += p
	}
	defer func() {
		if r := recover(); r != nil { // parquet-go panics on what it cannot convert
			err = fmt.Errorf("open reader: %v", r)
		}
	}()
	s.r = parquet.NewGenericReader[row](pf)
	s.buf = make([]row, 0, n)
	return nil
}

// partSchema is the schema of the files this package writes.
var partSchema = parquet.SchemaOf(row{})

// Schema returns the Parquet schema of the files this package writes: its
// columns, their types and their order.
func Schema() *parquet.Schema { return partSchema }

// next makes s.buf[s.i] the next row, reading a buffer's worth if
// needed, and reports whether there is one. A file not sorted, or with
// other than its rows, is an error wrapping [ErrCompactInput].
func (s *mergeSource) next() (bool, error) {
	if s.i == len(s.buf) {
		if s.r == nil {
			return false, nil
		}
		if s.read == s.rows {
			s.r.Close()
			s.r = nil
			return false, nil
		}
		// Never more rows than are left: parquet-go v0.32.0 reads every
		// column's next page header again for each row asked past the
		// end (a 504-row file read with a 1,024-row buffer allocated 15
		// MB). Zeroed rows: the reader allocates what the new rows point
		// to, so rows already handed to the writer's batch keep theirs.
		k := int(min(int64(cap(s.buf)), s.rows-s.read))
		clear(s.buf[:k])
		n, err := s.r.Read(s.buf[:k])
		s.buf, s.i = s.buf[:n], 0
		s.read += int64(n)
		if err != nil && !errors.Is(err, io.EOF) {
			return false, fmt.Errorf("%w: read %s: %v", ErrCompactInput, s.path, err)
		}
		if n == 0 {
			return false, fmt.Errorf("%w: %s: %d rows read, %d expected", ErrCompactInput, s.path, s.read, s.rows)
		}
	}
	r := &s.buf[s.i]
	if s.anything && compareRow(s.session, s.ts, s.seq, r) > 0 {
		return false, fmt.Errorf("%w: %s: not sorted by (session_id, ts, seq) at seq %d", ErrCompactInput, s.path, r.Seq)
	}
	s.session, s.ts, s.seq, s.anything = r.SessionID, r.tsKey(), r.Seq, true
	return true, nil
}

// compareRow compares (session, ts, seq) with r's, in the order of
// part.order.
func compareRow(session string, ts, seq int64, r *row) int {
	if c := strings.Compare(session, r.SessionID); c != 0 {
		return c
	}
	if c := cmp.Compare(ts, r.tsKey()); c != 0 {
		return c
	}
	return cmp.Compare(seq, r.Seq)
}

// close closes s. It is safe to call more than once.
func (s *mergeSource) close() {
	if s.f == nil {
		return
	}
	if s.r != nil {
		s.r.Close()
		s.r = nil
	}
	s.f.Close()
	s.f = nil
	s.buf = nil
}

// mergeQueue is a heap of sources by their current row.
type mergeQueue []*mergeSource

func (q mergeQueue) Len() int { return len(q) }

func (q mergeQueue) Less(i, j int) bool {
	a := &q[i].buf[q[i].i]
	return compareRow(a.SessionID, a.tsKey(), a.Seq, &q[j].buf[q[j].i]) < 0
}

func (q mergeQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }

func (q *mergeQueue) Push(x any) { *q = append(*q, x.(*mergeSource)) }

func (q *mergeQueue) Pop() any {
	old := *q
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return s
}
