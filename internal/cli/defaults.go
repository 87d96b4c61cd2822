package cli

import "time"

// The defaults of the indexer's and the exporter's flags. They are the
// components' own (index.DefaultConsumerName, export.DefaultPartBytes...),
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
	// DefaultPartBytes is export.DefaultPartBytes.
	DefaultPartBytes = 64 << 20
	// DefaultPartAge is export.DefaultPartAge.
	DefaultPartAge = 5 * time.Minute
	// DefaultCompactMinAge is export.DefaultCompactMinAge.
	DefaultCompactMinAge = 24 * time.Hour
	// DefaultCompactTargetBytes is export.DefaultCompactTargetBytes.
	DefaultCompactTargetBytes = 256 << 20
	// DefaultCompactMinFiles is export.DefaultCompactMinFiles.
	DefaultCompactMinFiles = 2
	// DefaultCompactMemoryBytes is export.DefaultCompactMemoryBytes.
	DefaultCompactMemoryBytes = 64 << 20
	// DefaultCompactLockTimeout is export.DefaultCompactLockTimeout.
	DefaultCompactLockTimeout = 30 * time.Second
	// DefaultLeftoverAge is export.DefaultLeftoverAge.
	DefaultLeftoverAge = time.Hour
)
