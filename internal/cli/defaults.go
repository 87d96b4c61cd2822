package cli

import "time"

// The defaults of the indexer's and the exporter's flags. They are the
// components' own (index.DefaultConsumerName, parquet.DefaultPartBytes...),
// written again here so that the flags of every command are known without
// linking pebble or parquet-go: the tailer's binary parses the whole config
// file, every section of it, with the flags of this package.
// TestFlagDefaults in cmd/internal/indexcmd and cmd/internal/exportcmd keeps
// them equal to the components'.
const (
	// DefaultIndexerConsumer is index.DefaultConsumerName.
	DefaultIndexerConsumer = "indexer"
	// DefaultWebhookConsumer is index.DefaultWebhookConsumer.
	DefaultWebhookConsumer = "webhook"
	// DefaultAlertMaxLag is index.DefaultAlertMaxLag.
	DefaultAlertMaxLag = time.Hour

	// DefaultExporterConsumer is export.DefaultConsumerName.
	DefaultExporterConsumer = "exporter"
	// DefaultPartBytes is parquet.DefaultPartBytes.
	DefaultPartBytes = 64 << 20
	// DefaultPartAge is parquet.DefaultPartAge.
	DefaultPartAge = 5 * time.Minute
	// DefaultCompactMinAge is parquet.DefaultCompactMinAge.
	DefaultCompactMinAge = 24 * time.Hour
	// DefaultCompactTargetBytes is parquet.DefaultCompactTargetBytes.
	DefaultCompactTargetBytes = 256 << 20
	// DefaultCompactMinFiles is parquet.DefaultCompactMinFiles.
	DefaultCompactMinFiles = 2
	// DefaultCompactMemoryBytes is parquet.DefaultCompactMemoryBytes.
	DefaultCompactMemoryBytes = 64 << 20
	// DefaultCompactLockTimeout is parquet.DefaultCompactLockTimeout.
	DefaultCompactLockTimeout = 30 * time.Second
	// DefaultLeftoverAge is parquet.DefaultLeftoverAge.
	DefaultLeftoverAge = time.Hour
)
