package parquet

import (
	"fmt"
	"io"
	"strconv"

	"github.com/parquet-go/parquet-go"

	"github.com/sessionpipe/sessionpipe/schema"
)

// Key-value metadata keys written in every file's footer; DuckDB shows
// them with parquet_kv_metadata.
const (
	MetaSchemaVersion = "sessionpipe.schema_version" // schema.Version
	MetaFirstSeq      = "sessionpipe.first_seq"      // stream sequence of the file's first entry
	MetaLastSeq       = "sessionpipe.last_seq"       // of its last entry
	MetaFormat        = "sessionpipe.format"         // the partition's values, unescaped
	MetaDate          = "sessionpipe.date"
	MetaHost          = "sessionpipe.host"
	MetaWriter        = "sessionpipe.writer" // Config.WriterVersion
)

// statsBytes bounds the min and max values recorded in column indexes:
// long enough for whole session ids and keys.
const statsBytes = 64

// blobColumns returns the free-text columns: their min/max values say
// nothing useful to a query and can be large (a tool result of
// megabytes), so neither the footer nor the page headers carry them.
func blobColumns() [][]string {
	return [][]string{
		{"text"},
		{"raw"},
		{"command_args"},
		{"tool_calls", "list", "element", "input"},
		{"tool_results", "list", "element", "content"},
	}
}

// writeBatch is how many rows are handed to the Parquet writer at once.
const writeBatch = 1024

// encoder writes parts as Parquet files. It keeps the zstd codec (and so
// its encoder) from file to file, and a fresh Parquet writer per file:
// parquet-go v0.32.0's Writer.Reset leaves the column chunks of the next
// file without their metadata (path_in_schema, type, codec), which DuckDB
// tolerates and other readers need.
type encoder struct {
	cfg     Config
	codec   *codec
	pw      *parquet.GenericWriter[row]
	batch   []row
	scratch scratch // what the batch's rows point to
}

func newEncoder(cfg Config) (*encoder, error) {
	c, err := newCodec(cfg.CompressionLevel)
	if err != nil {
		return nil, fmt.Errorf("create zstd encoder: %w", err)
	}
	return &encoder{cfg: cfg, codec: c, batch: make([]row, 0, writeBatch)}, nil
}

// encode writes p's rows, sorted, as one Parquet file to w.
func (c *encoder) encode(w io.Writer, p *part) error {
	opts := append(partWriterOptions(c.cfg, c.codec), parquet.PageBufferSize(pageBufferBytes(p.size(), c.cfg.PageBytes)))
	c.pw = parquet.NewGenericWriter[row](w, opts...)
	defer func() { c.pw = nil }()
	pw := c.pw
	for _, kv := range [...][2]string{
		{MetaSchemaVersion, strconv.Itoa(schema.Version)},
		{MetaFirstSeq, strconv.FormatUint(p.first, 10)},
		{MetaLastSeq, strconv.FormatUint(p.last, 10)},
		{MetaFormat, p.partition.Format},
		{MetaDate, p.partition.Date},
		{MetaHost, p.partition.Host},
		{MetaWriter, c.cfg.WriterVersion},
	} {
		pw.SetKeyValueMetadata(kv[0], kv[1])
	}
	for _, r := range p.order() {
		c.batch = append(c.batch, row{})
		r.unpack(&c.batch[len(c.batch)-1], &p.strs, &p.tables, &c.scratch)
		if len(c.batch) == cap(c.batch) {
			if err := c.flush(); err != nil {
				return err
			}
		}
	}
	if err := c.flush(); err != nil {
		return err
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("close parquet writer: %w", err)
	}
	return nil
}

// pageBufferBytes sizes the page buffers of a file of a part holding
// partBytes: parquet-go allocates each column's buffer at the page size
// up front (about 1 MiB for each of some forty columns at the default),
// which a small file (a quiet partition, or a backfill of months cut into
// day files) would allocate and clear for a few rows. No column of a part
// holds more than the part's bytes, so a buffer of that size (rounded up
// to a power of two, at least 64 KiB, at most pageBytes) gives the same
// pages; a larger part gets pageBytes.
func pageBufferBytes(partBytes int64, pageBytes int) int {
	n := 64 << 10
	for n < pageBytes && int64(n) < partBytes {
		n *= 2
	}
	return min(n, pageBytes)
}

func (c *encoder) flush() error {
	if len(c.batch) == 0 {
		return nil
	}
	_, err := c.pw.Write(c.batch)
	clear(c.batch) // drop references to the part's strings
	c.batch = c.batch[:0]
	c.scratch.reset()
	if err != nil {
		return fmt.Errorf("write parquet rows: %w", err)
	}
	return nil
}
