// Package store is the indexer's persisted state: a pebble database in a
// directory one process owns, read and written as ordered keys and values
// ([Store.Get], [Store.Scan], [Store.NewIter], a [Batch] committed
// atomically with fsync by [Store.Commit]), with its failure handling: a
// disk that refuses a write or files that are corrupt make the store
// refuse everything after (a *[Error]; corruption wraps [ErrCorrupt]), a
// corrupt state is moved aside at [Open] and an empty one opened, and
// [Check] reads a state through without changing it.
//
// It is the typed key-value layer, not the codec: the keys and the
// encoding of the aggregator's records (facts, sessions, turn states,
// rollup cells, the turn ledger) stay in pipeline/index, next to the
// types they encode. The codec needs those types' unexported fields, and
// the aggregator needs the store: a codec here would have to export every
// field of the counting rules' internals, or import index, a cycle. The
// store owns only the meta records' prefix ([MetaKey]).
//
// It is the only package of the module that imports pebble (a test checks
// it with go list). It imports pipeline/dirlock (the directory lock) and
// the standard library.
package store
