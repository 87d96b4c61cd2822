package store

import "errors"

// ErrCorrupt is wrapped by the errors of a state that does not read back:
// files pebble finds corrupt or missing, and records that do not decode
// (its user wraps it for those). The indexer discards such a state and
// rebuilds it from the stream.
var ErrCorrupt = errors.New("index: corrupt state")

// ErrInvalidConfig is wrapped by the error of [Open] for a [Config] it
// cannot use.
var ErrInvalidConfig = errors.New("index: invalid configuration")

// ErrClosed is returned by [Store.Probe] after [Store.Close].
var ErrClosed = errors.New("index: state closed")
