package parquet

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
)

// The planner of Compact: which files of which partitions to merge, from
// the manifest alone (no file is read).

// closedBefore returns the first date (YYYY-MM-DD) that is not closed at
// now.
func (c CompactConfig) closedBefore(now time.Time) string {
	t := c.ClosedBefore
	if t.IsZero() {
		t = now.Add(-c.MinAge)
	}
	return t.UTC().Format(time.DateOnly)
}

// compactGroup is one planned merge: files of one partition, in stream order.
type compactGroup struct {
	partition Partition
	files     []File
}

// planCompaction returns the merges to do in m's closed partitions (dated before
// the date before), partition by partition.
func planCompaction(m *Manifest, before string, cfg CompactConfig) []compactGroup {
	small := make(map[Partition][]File)
	for _, f := range m.Files {
		if p := f.Partition; p.Date != "" && p.Date < before && f.Bytes < cfg.TargetBytes {
			small[p] = append(small[p], f)
		}
	}
	parts := make([]Partition, 0, len(small))
	for p, files := range small {
		if len(files) >= cfg.MinFiles {
			parts = append(parts, p)
		}
	}
	slices.SortFunc(parts, func(a, b Partition) int { return strings.Compare(a.Dir(), b.Dir()) })
	var groups []compactGroup
	for _, p := range parts {
		files := small[p]
		slices.SortFunc(files, func(a, b File) int { return cmp.Compare(a.FirstSeq, b.FirstSeq) })
		var g []File
		var size int64
		for _, f := range files {
			if len(g) > 0 && size+f.Bytes > cfg.TargetBytes {
				if len(g) > 1 {
					groups = append(groups, compactGroup{partition: p, files: g})
				}
				g, size = nil, 0
			}
			g = append(g, f)
			size += f.Bytes
		}
		if len(g) > 1 {
			groups = append(groups, compactGroup{partition: p, files: g})
		}
	}
	return groups
}

// merge returns g as a Merge: its inputs and the merged file's path.
func (g compactGroup) merge() Merge {
	mg := Merge{Partition: g.partition, Output: path.Join(g.partition.Dir(), g.name())}
	for _, f := range g.files {
		mg.Inputs = append(mg.Inputs, f.Path)
		mg.RowsIn += f.Rows
		mg.BytesIn += f.Bytes
	}
	return mg
}

// span returns the union of the inputs' stream ranges.
func (g compactGroup) span() (first, last uint64) {
	first = g.files[0].FirstSeq
	for _, f := range g.files {
		first = min(first, f.FirstSeq)
		last = max(last, f.LastSeq)
	}
	return first, last
}

// name returns the merged file's name: its stream range and a generation
// above its inputs'. Two files listed at once never have the same first
// sequence in one partition (each original part's range ends up in one
// listed file), a Writer names new parts from sequences above every
// listed one, and the generation tells the merged file from an input
// that spans the same range.
func (g compactGroup) name() string {
	first, last := g.span()
	gen := 0
	for _, f := range g.files {
		_, _, n, _ := parseDataName(path.Base(f.Path))
		gen = max(gen, n)
	}
	return fmt.Sprintf("part-%d-%d-c%d.parquet", first, last, gen+1)
}
