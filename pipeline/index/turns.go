package index

import (
	"cmp"
	"encoding/binary"
	"slices"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/index/store"

	"github.com/sessionpipe/sessionpipe/schema"
)

// Turns: with Config.Turns, every session keeps a ledger of what its
// winning facts say about its turns: the start of each turn (its time and
// prompt head) and each API call (its time, tokens and cost). The ledger
// moves with the facts, so a session's turns are computed, when asked,
// from the facts it counts now, whatever order they arrived in: each call
// belongs to the latest turn started at or before it.

// PromptHead is how much of a turn's prompt the ledger keeps.
const PromptHead = 120

// Turn is one turn of a session: a real user input and what the model
// did until the next one.
type Turn struct {
	Start            time.Time `json:"start"`
	Prompt           string    `json:"prompt"` // the first PromptHead bytes
	APICalls         int64     `json:"api_calls"`
	InputTokens      int64     `json:"input_tokens"`
	OutputTokens     int64     `json:"output_tokens"`
	CacheReadTokens  int64     `json:"cache_read_tokens"`
	CacheWriteTokens int64     `json:"cache_write_tokens"`
	TotalTokens      int64     `json:"total_tokens"`
	CostUSD          float64   `json:"cost_usd"`
	Models           []string  `json:"models,omitempty"`
	// PriceSources counts the turn's priced calls by where their price
	// came from (as Session.PriceSources, calls only).
	PriceSources map[string]int64 `json:"price_sources,omitempty"`
}

// ledgerKey orders a session's ledger: by time, turn starts before calls
// of the same instant, then by fact.
type ledgerKey struct {
	ts   stamp
	kind factKind
	fact factKey
}

// ledgerItem is a turn start (prompt set) or a call.
type ledgerItem struct {
	prompt string
	call   usageContrib
}

// ledgerOp is a ledger change waiting for the next commit.
type ledgerOp struct {
	num  uint64
	key  ledgerKey
	item ledgerItem
	del  bool
}

// ledgerStoreKey is the key of a ledger item: 'k' + session number +
// time + kind + fact. The time is 8 bytes of Unix nanoseconds, 0 for none
// (34-byte keys, as ever) when that names it: after 1970-01-01T00:00:00Z
// and up to 2262; else 8 bytes of seconds since year 1 and 4 of
// nanoseconds (38-byte keys). Keys are not read in order: Turns sorts.
func ledgerStoreKey(num uint64, k ledgerKey) []byte {
	b := make([]byte, 0, 38)
	b = append(b, 'k')
	b = binary.BigEndian.AppendUint64(b, num)
	if ns, ok := ledgerNano(k.ts); ok {
		b = binary.BigEndian.AppendUint64(b, uint64(ns))
	} else {
		b = binary.BigEndian.AppendUint64(b, uint64(k.ts.sec))
		b = binary.BigEndian.AppendUint32(b, uint32(k.ts.nsec))
	}
	b = append(b, byte(k.kind))
	b = binary.BigEndian.AppendUint64(b, k.fact.hi)
	return binary.BigEndian.AppendUint64(b, k.fact.lo)
}

// ledgerNano returns the Unix nanoseconds of ts for a 34-byte ledger key
// (0 for none), and whether they name it.
func ledgerNano(ts stamp) (int64, bool) {
	if !ts.known() {
		return 0, true
	}
	t := ts.time()
	if !t.After(time.Unix(0, 0)) || t.After(maxNanoTime) {
		return 0, false
	}
	return t.UnixNano(), true
}

func parseLedgerKey(b []byte) (ledgerKey, bool) {
	var k ledgerKey
	switch len(b) {
	case 34:
		if ns := int64(binary.BigEndian.Uint64(b[9:])); ns > 0 {
			k.ts = stampOf(time.Unix(0, ns))
		}
		b = b[17:]
	case 38:
		k.ts = stamp{sec: int64(binary.BigEndian.Uint64(b[9:])), nsec: int32(binary.BigEndian.Uint32(b[17:]))}
		b = b[21:]
	default:
		return ledgerKey{}, false
	}
	k.kind = factKind(b[0])
	k.fact = factKey{binary.BigEndian.Uint64(b[1:]), binary.BigEndian.Uint64(b[9:])}
	return k, true
}

// ledger records a turn start or a call of session s (sign 1), or takes
// it back (sign -1).
func (a *Aggregator) ledger(s *session, k ledgerKey, item ledgerItem, sign int64) {
	if !a.turns {
		return
	}
	if a.store != nil {
		a.ledgerOps = append(a.ledgerOps, ledgerOp{num: s.num, key: k, item: item, del: sign < 0})
		return
	}
	if s.ledger == nil {
		s.ledger = make(map[ledgerKey]ledgerItem)
	}
	if sign > 0 {
		s.ledger[k] = item
	} else {
		delete(s.ledger, k)
	}
}

// writeLedger adds the pending ledger changes to b, in order.
func (a *Aggregator) writeLedger(b *store.Batch, buf []byte) []byte {
	for _, op := range a.ledgerOps {
		k := ledgerStoreKey(op.num, op.key)
		if op.del {
			b.Delete(k)
			continue
		}
		buf = encodeLedgerItem(buf[:0], &op.item, op.key.kind)
		b.Set(k, buf)
	}
	clear(a.ledgerOps)
	a.ledgerOps = a.ledgerOps[:0]
	return buf
}

func encodeLedgerItem(b []byte, it *ledgerItem, kind factKind) []byte {
	e := encoder{b: append(b, recordVersion)}
	if kind == kindEntry {
		e.string(it.prompt)
	} else {
		usageCodec{}.encode(&e, &it.call)
	}
	return e.b
}

func decodeLedgerItem(b []byte, kind factKind) (ledgerItem, error) {
	d := decoder{b: b}
	d.version()
	var it ledgerItem
	if kind == kindEntry {
		it.prompt = d.string()
	} else {
		it.call = usageCodec{}.decode(&d)
	}
	return it, d.end()
}

// Turns returns the turns of the session of format, host and id, oldest
// first, and whether the session is known. Calls before the session's first real input (a
// resumed session's first reply, say) make a turn with no prompt and the
// time of the first of them. It needs Config.Turns.
func (a *Aggregator) Turns(format schema.Format, host, id string) ([]Turn, bool, error) {
	k := sessionKey{format, host, id}
	s := a.sessions[k]
	if s == nil && a.store != nil {
		s = a.loadSession(k)
	}
	if a.err != nil {
		return nil, false, a.err
	}
	if s == nil {
		return nil, false, nil
	}
	a.settle()
	items := make(map[ledgerKey]ledgerItem, len(s.ledger))
	for k, v := range s.ledger {
		items[k] = v
	}
	if a.store != nil {
		prefix := binary.BigEndian.AppendUint64([]byte{'k'}, s.num)
		var derr error
		err := a.store.Scan(prefix, func(key, v []byte) bool {
			lk, ok := parseLedgerKey(key)
			if !ok {
				return true
			}
			it, err := decodeLedgerItem(v, lk.kind)
			if err != nil {
				derr = err
				return false
			}
			items[lk] = it
			return true
		})
		if err == nil {
			err = derr
		}
		if err != nil {
			return nil, true, err
		}
		for _, op := range a.ledgerOps {
			if op.num != s.num {
				continue
			}
			if op.del {
				delete(items, op.key)
			} else {
				items[op.key] = op.item
			}
		}
	}
	keys := make([]ledgerKey, 0, len(items))
	for k := range items {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y ledgerKey) int {
		if c := compareLedgerTime(x.ts, y.ts); c != 0 {
			return c
		}
		if c := cmp.Compare(x.kind, y.kind); c != 0 {
			return c // 'e' (a turn start) before 'u' (a call)
		}
		if c := cmp.Compare(x.fact.hi, y.fact.hi); c != 0 {
			return c
		}
		return cmp.Compare(x.fact.lo, y.fact.lo)
	})
	var turns []Turn
	models := map[string]bool{}
	for _, k := range keys {
		it := items[k]
		if k.kind == kindEntry || len(turns) == 0 {
			finishModels(turns, models)
			turns = append(turns, Turn{Start: k.ts.time()})
			if k.kind == kindEntry {
				turns[len(turns)-1].Prompt = it.prompt
				continue
			}
		}
		t := &turns[len(turns)-1]
		c := &it.call
		t.APICalls++
		t.InputTokens = addSat(t.InputTokens, c.input)
		t.OutputTokens = addSat(t.OutputTokens, c.output)
		t.CacheReadTokens = addSat(t.CacheReadTokens, c.cacheRead)
		t.CacheWriteTokens = addSat(t.CacheWriteTokens, c.cacheWrite)
		t.TotalTokens = addSat(addSat(t.InputTokens, t.OutputTokens), addSat(t.CacheReadTokens, t.CacheWriteTokens))
		t.CostUSD = usd(nanoUSD(t.CostUSD) + c.cost)
		if c.source != "" && !c.unpriced {
			if t.PriceSources == nil {
				t.PriceSources = make(map[string]int64)
			}
			t.PriceSources[c.source]++
		}
		if c.model != "" {
			models[c.model] = true
		}
	}
	finishModels(turns, models)
	return turns, true, nil
}

// finishModels sets the models of the last turn from the set, emptying it.
func finishModels(turns []Turn, models map[string]bool) {
	if len(turns) == 0 || len(models) == 0 {
		return
	}
	t := &turns[len(turns)-1]
	for m := range models {
		t.Models = append(t.Models, m)
	}
	slices.Sort(t.Models)
	clear(models)
}

// compareLedgerTime orders the ledger by time, items without one first
// (as when they were kept as Unix nanoseconds, 0 for none).
func compareLedgerTime(x, y stamp) int {
	switch {
	case x == y:
		return 0
	case !x.known():
		return -1
	case !y.known():
		return 1
	}
	return x.compare(y)
}
