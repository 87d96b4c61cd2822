package parquet

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The planner decides from the manifest alone, without reading a file:
// only closed partitions (dated before the cut; an undated one never),
// only files below the target size, only partitions with at least
// MinFiles such files; their files in stream order, cut into groups of at
// most TargetBytes; a group of one file is no merge; partitions in
// directory order.
func TestPlanCompaction(t *testing.T) {
	closedA := Partition{Format: "pi", Date: "2026-01-01", Host: "a"}
	closedB := Partition{Format: "pi", Date: "2026-01-01", Host: "b"}
	closedC := Partition{Format: "pi", Date: "2026-01-02", Host: "c"}
	open := Partition{Format: "pi", Date: "2026-01-03", Host: "a"}
	undated := Partition{Format: "pi", Host: "a"}
	f := func(p Partition, first uint64, bytes int64) File {
		return File{Partition: p, FirstSeq: first, LastSeq: first, Bytes: bytes, Path: p.Dir() + "/part"}
	}
	m := &Manifest{Files: []File{
		f(closedB, 9, 10), f(closedB, 3, 10), // listed out of order: merged in stream order
		f(closedA, 5, 40), f(closedA, 1, 40), f(closedA, 7, 40), f(closedA, 8, 100), // 100: at the target, left alone
		f(closedC, 2, 10),              // one small file: nothing to merge with
		f(open, 4, 10), f(open, 6, 10), // not closed yet
		f(undated, 10, 10), f(undated, 11, 10), // no date: never closed
	}}
	groups := planCompaction(m, "2026-01-03", CompactConfig{TargetBytes: 100, MinFiles: 2})

	type plan struct {
		p     Partition
		first []uint64
	}
	var got []plan
	for _, g := range groups {
		pl := plan{p: g.partition}
		for _, x := range g.files {
			pl.first = append(pl.first, x.FirstSeq)
		}
		got = append(got, pl)
	}
	require.Equal(t, []plan{
		{closedA, []uint64{1, 5}}, // 40+40; the third would pass 100
		{closedB, []uint64{3, 9}},
	}, got, "closedA's third file starts a group of one, which is dropped")

	require.Empty(t, planCompaction(m, "2026-01-03", CompactConfig{TargetBytes: 100, MinFiles: 4}),
		"no partition has 4 files below the target")
	require.Len(t, planCompaction(m, "2026-01-04", CompactConfig{TargetBytes: 100, MinFiles: 2}), 3,
		"a later cut closes the partition of 2026-01-03 too")
}
