package index

// BuildListing builds the listing of the stored sessions, as the indexer
// does when it opens its state (for the benchmarks of the external test
// package).
func (a *Aggregator) BuildListing() error { return a.buildListing() }
