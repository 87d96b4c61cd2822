package index

import (
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
)

// HealthProblems says what keeps a ready indexer from working, nil when
// nothing does (GET /healthz of the API): NATS disconnected, Run stopped (no consumer runs), or
// commits failing for longer than a few commit intervals.
func (ix *Indexer) HealthProblems(now time.Time, s IndexerStats) []string {
	var problems []string
	if nc := ix.cfg.JS.Conn(); nc != nil && nc.Status() != nats.CONNECTED {
		problems = append(problems, "nats: "+strings.ToLower(nc.Status().String()))
	}
	ix.mu.Lock()
	stopped := ix.agg == nil
	behind := ix.applied > ix.committed
	since := now.Sub(ix.committedAt)
	ix.mu.Unlock()
	switch {
	case stopped:
		problems = append(problems, "indexer stopped: no consumer runs")
	case s.CommitError != "" && behind && since > commitStall(ix.cfg.CommitInterval):
		// CommitError stays after a later commit succeeds: the commits
		// fail only while the applied entries wait for one.
		problems = append(problems, fmt.Sprintf("commits failing: none for %s: %s", since.Round(time.Second), s.CommitError))
	}
	return problems
}

// commitStall is how long applied entries may wait for a commit before
// the indexer is unhealthy.
func commitStall(interval time.Duration) time.Duration {
	return max(5*interval, 10*time.Second)
}

// Registry is the registry of the indexer's own metrics
// (IndexerConfig.Registry): the API serves it on /metrics.
func (ix *Indexer) Registry() prometheus.Gatherer { return ix.cfg.Registry }
