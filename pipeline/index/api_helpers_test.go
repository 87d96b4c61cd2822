package index_test

// Helpers of the tests that read the indexer through its API (copies of
// those of pipeline/index/api's tests).
