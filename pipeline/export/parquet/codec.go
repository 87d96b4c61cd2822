package parquet

import (
	"sync"

	kzstd "github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// codec is the zstd page codec of the Parquet files: one klauspost
// encoder kept for the writer's life. parquet-go's own zstd.Codec keeps
// its encoders in a sync.Pool, which every garbage collection empties, so
// each new encoder allocated its history buffers again: 160 MB of
// allocations per 18 MB of entries, and the collections they cause.
type codec struct {
	mu     sync.Mutex // parquet-go may compress pages from several goroutines
	enc    *kzstd.Encoder
	decode zstd.Codec // decoding is not on the write path: parquet-go's
}

// pageWindow is the zstd window of the Parquet pages.
const pageWindow = 2 << 20

func newCodec(level zstd.Level) (*codec, error) {
	enc, err := kzstd.NewWriter(nil,
		kzstd.WithEncoderConcurrency(1),
		kzstd.WithEncoderLevel(level),
		kzstd.WithZeroFrames(true),
		kzstd.WithEncoderCRC(false),
		// A page is compressed alone and is about DefaultPageBytes: the
		// default 8 MiB window would only make the history buffer larger.
		kzstd.WithWindowSize(pageWindow),
	)
	if err != nil {
		return nil, err
	}
	return &codec{enc: enc}, nil
}

func (c *codec) String() string { return "ZSTD" }

func (c *codec) CompressionCodec() format.CompressionCodec { return format.Zstd }

// Encode compresses src into dst's storage as one zstd frame.
func (c *codec) Encode(dst, src []byte) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.enc.EncodeAll(src, dst[:0]), nil
}

// Decode decompresses src, as parquet-go's zstd codec does.
func (c *codec) Decode(dst, src []byte) ([]byte, error) {
	return c.decode.Decode(dst, src)
}
