package index

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sessionpipe/sessionpipe/schema"
)

// Labels: an entry's labels ([schema.Entry.Labels], the tailer's -label
// flags) are kept as a labelSet, one comparable string, in the calls
// that carry them (so a call's labels are those of its own entry) and in
// sessions (the labels of the session's earliest labelled entry, chosen
// as its host is: see Session.Labels). Rollup cells are keyed by the
// call's whole label set, so that usage can be grouped by any label
// (group_by=label:<name>) and filtered by several.

// labelSet is a set of labels as one string: for each label in key
// order, its key then its value, each preceded by its length as a
// uvarint. "" is no labels.
type labelSet string

// labeler turns entries' label maps into label sets, remembering the
// last one: a host's entries all carry the same labels.
type labeler struct {
	last map[string]string
	set  labelSet
}

// of returns the label set of m.
func (l *labeler) of(m map[string]string) labelSet {
	if len(m) == 0 {
		return ""
	}
	if len(l.last) == len(m) && sameLabels(l.last, m) {
		return l.set
	}
	l.last, l.set = maps.Clone(m), makeLabelSet(m)
	return l.set
}

func sameLabels(x, y map[string]string) bool {
	for k, v := range x {
		if w, ok := y[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func makeLabelSet(m map[string]string) labelSet {
	keys := slices.Sorted(maps.Keys(m))
	n := 0
	for _, k := range keys {
		n += len(k) + len(m[k]) + 4
	}
	b := make([]byte, 0, n)
	for _, k := range keys {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		b = binary.AppendUvarint(b, uint64(len(m[k])))
		b = append(b, m[k]...)
	}
	return labelSet(b)
}

// each calls f with each label, in key order, until f returns false.
// A malformed set (not made by makeLabelSet) ends early.
func (l labelSet) each(f func(k, v string) bool) {
	s := string(l)
	next := func() (string, bool) {
		n, w := binary.Uvarint([]byte(s[:min(len(s), binary.MaxVarintLen64)]))
		if w <= 0 || n > uint64(len(s)-w) {
			return "", false
		}
		v := s[w : w+int(n)]
		s = s[w+int(n):]
		return v, true
	}
	for s != "" {
		k, ok := next()
		if !ok {
			return
		}
		v, ok := next()
		if !ok || !f(k, v) {
			return
		}
	}
}

// get returns the value of label name, "" when the set has none.
func (l labelSet) get(name string) string {
	var out string
	l.each(func(k, v string) bool {
		if k == name {
			out = v
			return false
		}
		return k < name
	})
	return out
}

// matches reports whether the set holds every label of want.
func (l labelSet) matches(want map[string]string) bool {
	for k, v := range want {
		if l.get(k) != v {
			return false
		}
	}
	return true
}

// toMap returns the labels as a map, nil when there are none.
func (l labelSet) toMap() map[string]string {
	if l == "" {
		return nil
	}
	m := make(map[string]string, 4)
	l.each(func(k, v string) bool {
		m[k] = v
		return true
	})
	return m
}

// labelGroupPrefix starts a group_by value that groups by a label.
const labelGroupPrefix = "label:"

// Label returns the label name of a label dimension, and false for the
// other dimensions.
func (g GroupBy) Label() (string, bool) {
	return strings.CutPrefix(string(g), labelGroupPrefix)
}

// ParseLabelFilter parses a label filter of the HTTP API, name:value
// (the name cannot hold a colon; the value may), into m.
func ParseLabelFilter(m map[string]string, s string) error {
	name, value, ok := strings.Cut(s, ":")
	if !ok {
		return fmt.Errorf("label %q: want name:value", s)
	}
	if err := schema.ValidateLabel(name, value); err != nil {
		return fmt.Errorf("label %q: %w", s, err)
	}
	if old, dup := m[name]; dup && old != value {
		return fmt.Errorf("label %q: %s is filtered on %q already", s, name, old)
	}
	m[name] = value
	return nil
}
