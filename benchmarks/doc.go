// Package benchmarks holds sessionpipe's cross-library and end-to-end
// benchmarks and the committed results (RESULTS.md, run.sh). It has no
// API: the benchmarks live in its _test.go files, the synthetic corpus
// generator in the corpusgen sub-package, the corpus-tree command in
// cmd/gencorpus.
//
// BenchmarkDecode measures the extraction every format parser does,
// reading the fields the pipeline needs from each line and validating the
// rest, with sessionpipe's jsonl.Scanner and with other JSON libraries,
// against memory-bandwidth floors. Every implementation is checked
// against encoding/json on the whole corpus before it is timed;
// TestExtractionAgrees runs the same check on a small corpus in a plain
// `go test`.
package benchmarks
