package index

// BuildListing builds the listing of the stored sessions, as the indexer
// does when it opens its state (for the benchmarks of the external test
// package).
func (a *Aggregator) BuildListing() error { return a.buildListing() }

// UsageScan is UsageWithTotal read from the store and the cache, as
// without the listing's cell table (for tests comparing the two).
func (a *Aggregator) UsageScan(q UsageQuery) ([]UsageRow, UsageRow, error) {
	t := a.cells
	a.cells = nil
	defer func() { a.cells = t }()
	return a.UsageWithTotal(q)
}
