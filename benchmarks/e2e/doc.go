// Package e2e holds end-to-end benchmarks of the pipeline's stages
// together (tailer, JetStream, indexer) on one machine; it has no API.
package e2e
