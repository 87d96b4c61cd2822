package store

import "github.com/cockroachdb/pebble/v2/vfs"

// WithFS is cfg with pebble's file system set to fs (tests inject
// failures through it).
func WithFS(cfg Config, fs vfs.FS) Config {
	cfg.fs = fs
	return cfg
}
