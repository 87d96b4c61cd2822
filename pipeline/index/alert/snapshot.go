package alert

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// SnapshotVersion is the version of the snapshot encoding that
// [Evaluator.Snapshot] writes.
const SnapshotVersion = 1

// The snapshot encoding, version 1, is a JSON object:
//
//	{"version": 1,
//	 "seq": 1234, "part": 0,            // the last observation applied
//	 "rules": [{
//	   "name": "big-session",
//	   "shape": "session|total_tokens|/0|0|UTC",  // scope|metric|period/window ns|rate window ns|time zone
//	   "above": 1000000, "rearm_below": 1000000,
//	   "keys": [{
//	     "k": "3f2a…",                  // the key
//	     "fired": true,                 // fired and not re-armed
//	     "seen": 1763971200000000000,   // clock of its last observation, Unix ns
//	     "at": 1763971140000000000,     // where its window is: latest observation time or Advance clock, Unix ns
//	     "total": 1204332,              // running total, or the sum of the period [start, end)
//	     "start": 0, "end": 0,          // calendar and projected periods, Unix ns
//	     "head": 29399520,              // sliding and burn-rate windows: the newest bucket (Unix ns / bucket width)
//	     "off": [0, 3], "val": [120, 80] // non-empty buckets: head-off holds val
//	   }]}]}
//
// Keys are sorted, so equal states encode to equal bytes.
type snapshot struct {
	Version int        `json:"version"`
	Seq     uint64     `json:"seq"`
	Part    int        `json:"part"`
	Rules   []snapRule `json:"rules"`
}

type snapRule struct {
	Name  string    `json:"name"`
	Shape string    `json:"shape"`
	Above float64   `json:"above"`
	Rearm float64   `json:"rearm_below"`
	Keys  []snapKey `json:"keys"`
}

type snapKey struct {
	Key   string    `json:"k"`
	Fired bool      `json:"fired,omitempty"`
	Seen  int64     `json:"seen"`
	At    int64     `json:"at"`
	Total float64   `json:"total,omitempty"`
	Start int64     `json:"start,omitempty"`
	End   int64     `json:"end,omitempty"`
	Head  int64     `json:"head,omitempty"`
	Off   []int     `json:"off,omitempty"`
	Val   []float64 `json:"val,omitempty"`
}

// Snapshot encodes the evaluator's state: for every rule and key its
// value's state (running totals, period sums, window buckets) and whether
// it fired, and the (Seq, Part) of the last observation applied. Store it
// beside the stream sequence it covers; [Evaluator.Restore] brings it back.
func (e *Evaluator) Snapshot() ([]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := snapshot{Version: SnapshotVersion, Seq: e.seq, Part: e.part, Rules: make([]snapRule, 0, len(e.rules))}
	for _, rs := range e.rules {
		sr := snapRule{Name: rs.rule.Name, Shape: rs.rule.shape(), Above: rs.rule.Above, Rearm: rs.rule.rearm(),
			Keys: make([]snapKey, 0, len(rs.keys))}
		for k, ks := range rs.keys {
			sk := snapKey{Key: k, Fired: ks.fired, Seen: ks.seen, At: ks.at, Total: ks.total, Start: ks.start, End: ks.end}
			if ks.ring != nil {
				sk.Head = ks.ring.head
				for off := range Buckets {
					b := ks.ring.head - int64(off)
					if v := ks.ring.sums[mod(b)]; v != 0 {
						sk.Off = append(sk.Off, off)
						sk.Val = append(sk.Val, v)
					}
				}
			}
			sr.Keys = append(sr.Keys, sk)
		}
		slices.SortFunc(sr.Keys, func(a, b snapKey) int { return strings.Compare(a.Key, b.Key) })
		s.Rules = append(s.Rules, sr)
	}
	return json.Marshal(s)
}

// Restore replaces the evaluator's state with a snapshot's. Each rule in
// force takes the state the snapshot holds under its name when its shape
// (scope, metric, window, rate window, time zone) is the same, and starts
// empty otherwise; snapshot rules no longer in force are dropped. When a
// kept rule's threshold differs from the snapshot's, its keys are evaluated
// against the new one, as [Evaluator.Reload] does, and the events returned.
//
// On an error (ErrSnapshotVersion, ErrSnapshot) the state is left as it
// was; the caller then runs with empty state, which may fire again what
// fired before the snapshot.
func (e *Evaluator) Restore(data []byte) ([]Event, error) {
	var s snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSnapshot, err)
	}
	if s.Version != SnapshotVersion {
		return nil, fmt.Errorf("%w: %d (this version reads %d)", ErrSnapshotVersion, s.Version, SnapshotVersion)
	}
	byName := make(map[string]*snapRule, len(s.Rules))
	for i := range s.Rules {
		sr := &s.Rules[i]
		for _, sk := range sr.Keys {
			if len(sk.Off) != len(sk.Val) {
				return nil, fmt.Errorf("%w: rule %q key %q: %d offsets, %d values", ErrSnapshot, sr.Name, sk.Key, len(sk.Off), len(sk.Val))
			}
			for _, off := range sk.Off {
				if off < 0 || off >= Buckets {
					return nil, fmt.Errorf("%w: rule %q key %q: bucket offset %d", ErrSnapshot, sr.Name, sk.Key, off)
				}
			}
		}
		byName[sr.Name] = sr
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	var events []Event
	for i, old := range e.rules {
		rs := newRuleState(old.rule)
		e.rules[i] = rs
		sr, ok := byName[rs.rule.Name]
		if !ok || sr.Shape != rs.rule.shape() {
			continue
		}
		for _, sk := range sr.Keys {
			ks := rs.newKey()
			ks.fired, ks.seen, ks.at, ks.total, ks.start, ks.end = sk.Fired, sk.Seen, sk.At, sk.Total, sk.Start, sk.End
			if ks.ring != nil {
				ks.ring.head = sk.Head
				for j, off := range sk.Off {
					ks.ring.sums[mod(sk.Head-int64(off))] = sk.Val[j]
					ks.ring.sum += sk.Val[j]
				}
			}
			rs.keys[sk.Key] = ks
		}
		if sr.Above != rs.rule.Above || sr.Rearm != rs.rule.rearm() {
			events = append(events, e.reevaluate(rs, now)...)
		}
	}
	e.seq, e.part = s.Seq, s.Part
	return events, nil
}
