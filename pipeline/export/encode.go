package export

import (
	"fmt"
	"io"
	"strconv"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
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

// writeBatch is how many rows are handed to the Parquet writer at once.
const writeBatch = 1024

// encoder writes parts as Parquet files. It keeps the zstd codec (and its
// encoders) from file to file.
type encoder struct {
	cfg   Config
	codec *zstd.Codec
	batch []row
}

func newEncoder(cfg Config) *encoder {
	return &encoder{cfg: cfg, codec: &zstd.Codec{Level: cfg.CompressionLevel, Concurrency: 1}}
}

// encode writes p's rows, sorted, as one Parquet file to w.
func (c *encoder) encode(w io.Writer, p *part) error {
	pw := parquet.NewGenericWriter[row](w,
		parquet.Compression(c.codec),
		parquet.MaxRowsPerRowGroup(c.cfg.RowGroupRows),
		parquet.PageBufferSize(c.cfg.PageBytes),
		parquet.DataPageStatistics(true),
		parquet.ColumnIndexSizeLimit(func([]string) int { return statsBytes }),
		parquet.CreatedBy(c.cfg.WriterVersion, "", ""),
		parquet.SortingWriterConfig(parquet.SortingColumns(
			parquet.Ascending("session_id"),
			parquet.NullsFirst(parquet.Ascending("ts")),
			parquet.Ascending("seq"),
		)),
		parquet.KeyValueMetadata(MetaSchemaVersion, strconv.Itoa(schema.Version)),
		parquet.KeyValueMetadata(MetaFirstSeq, strconv.FormatUint(p.first, 10)),
		parquet.KeyValueMetadata(MetaLastSeq, strconv.FormatUint(p.last, 10)),
		parquet.KeyValueMetadata(MetaFormat, p.partition.Format),
		parquet.KeyValueMetadata(MetaDate, p.partition.Date),
		parquet.KeyValueMetadata(MetaHost, p.partition.Host),
		parquet.KeyValueMetadata(MetaWriter, c.cfg.WriterVersion),
	)
	if c.batch == nil {
		c.batch = make([]row, 0, writeBatch)
	}
	for _, i := range p.order() {
		c.batch = append(c.batch, p.rows[i])
		if len(c.batch) == cap(c.batch) {
			if err := c.flush(pw); err != nil {
				return err
			}
		}
	}
	if err := c.flush(pw); err != nil {
		return err
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("close parquet writer: %w", err)
	}
	return nil
}

func (c *encoder) flush(pw *parquet.GenericWriter[row]) error {
	if len(c.batch) == 0 {
		return nil
	}
	_, err := pw.Write(c.batch)
	clear(c.batch) // drop references to the part's strings
	c.batch = c.batch[:0]
	if err != nil {
		return fmt.Errorf("write parquet rows: %w", err)
	}
	return nil
}
