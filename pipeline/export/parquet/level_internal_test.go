package parquet

import (
	"testing"

	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/stretchr/testify/require"
)

// The writer, on the live path, compresses its pages at the fastest
// level; compaction, which rewrites closed partitions once, at the
// default one. An explicit level is kept by both.
func TestCompressionLevels(t *testing.T) {
	require.Equal(t, zstd.SpeedFastest, Config{Dir: "x"}.withDefaults().CompressionLevel)
	require.Equal(t, zstd.SpeedDefault, CompactConfig{Dir: "x"}.withDefaults().CompressionLevel)
	require.Equal(t, zstd.SpeedDefault, CompactConfig{Dir: "x"}.withDefaults().format().withDefaults().CompressionLevel,
		"the compaction's encoder gets its level")
	require.Equal(t, zstd.SpeedBestCompression, Config{Dir: "x", CompressionLevel: zstd.SpeedBestCompression}.withDefaults().CompressionLevel)
	require.Equal(t, zstd.SpeedFastest, CompactConfig{Dir: "x", CompressionLevel: zstd.SpeedFastest}.withDefaults().CompressionLevel)
}
