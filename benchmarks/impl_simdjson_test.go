package benchmarks

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/minio/simdjson-go"
)

// simdjsonDecoder walks simdjson-go's tape of each root object to the
// fields. Strings are not copied out of the input (WithCopyStrings(false)).
//
// With nd set it parses the whole corpus at once with ParseND, the one
// implementation that needs the whole batch in memory; simdjson-go
// v0.4.5 does not reuse a tape given to ParseND, so every run allocates
// it anew. Without nd it parses line by line with Parse, reusing its tape.
type simdjsonDecoder struct {
	nd    bool
	pj    *simdjson.ParsedJson
	r     record
	obj   [4]simdjson.Object // one per nesting depth
	it    [4]simdjson.Iter
	arr   simdjson.Array
	elem  simdjson.Iter
	n     int                       // roots seen
	visit func(*record)             // the current call's visit
	each  func(simdjson.Iter) error // d.root, bound once
}

func newSimdjsonDecoder() decodeFunc   { return newSimdjson(false) }
func newSimdjsonNDDecoder() decodeFunc { return newSimdjson(true) }

func newSimdjson(nd bool) decodeFunc {
	d := &simdjsonDecoder{nd: nd}
	d.each = d.root
	return d.decode
}

func (d *simdjsonDecoder) decode(c *corpus, visit func(*record)) error {
	if !simdjson.SupportedCPU() {
		return errors.New("simdjson: this CPU lacks AVX2 or CLMUL")
	}
	d.n, d.visit = 0, visit
	if d.nd {
		pj, err := simdjson.ParseND(c.data, d.pj, simdjson.WithCopyStrings(false))
		if err != nil {
			return fmt.Errorf("simdjson: %w", err)
		}
		d.pj = pj
		if err := pj.ForEach(d.each); err != nil {
			return err
		}
	} else {
		for i, b := range c.lines {
			pj, err := simdjson.Parse(b, d.pj, simdjson.WithCopyStrings(false))
			if err != nil {
				return lineError(i, err)
			}
			d.pj = pj
			if err := pj.ForEach(d.each); err != nil {
				return err
			}
		}
	}
	if d.n != len(c.lines) {
		return fmt.Errorf("simdjson: %d records for %d lines", d.n, len(c.lines))
	}
	return nil
}

// root extracts the record of one root value and visits it.
func (d *simdjsonDecoder) root(root simdjson.Iter) error {
	d.n++
	r := &d.r
	*r = record{Message: message[[]block]{Content: r.Message.Content[:0]}}
	obj, err := root.Object(&d.obj[0])
	if err != nil {
		return lineError(d.n-1, err)
	}
	if err := d.top(obj); err != nil {
		return lineError(d.n-1, err)
	}
	d.visit(r)
	return nil
}

// sjStr returns a string value, aliasing the tape's strings or the input;
// "" for other types.
func sjStr(it *simdjson.Iter, t simdjson.Type) string {
	if t != simdjson.TypeString {
		return ""
	}
	b, err := it.StringBytes()
	if err != nil {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

func sjInt(it *simdjson.Iter, t simdjson.Type) int64 {
	if t != simdjson.TypeInt && t != simdjson.TypeUint {
		return 0
	}
	n, _ := it.Int()
	return n
}

func sjBool(it *simdjson.Iter, t simdjson.Type) bool {
	b, _ := it.Bool()
	return t == simdjson.TypeBool && b
}

func (d *simdjsonDecoder) top(obj *simdjson.Object) error {
	r, it := &d.r, &d.it[0]
	for {
		name, t, err := obj.NextElementBytes(it)
		if err != nil || t == simdjson.TypeNone {
			return err
		}
		switch string(name) {
		case "type":
			r.Type = sjStr(it, t)
		case "uuid":
			r.UUID = sjStr(it, t)
		case "parentUuid":
			r.ParentUUID = sjStr(it, t)
		case "sessionId":
			r.SessionID = sjStr(it, t)
		case "timestamp":
			r.Timestamp = sjStr(it, t)
		case "requestId":
			r.RequestID = sjStr(it, t)
		case "isSidechain":
			r.IsSidechain = sjBool(it, t)
		case "isMeta":
			r.IsMeta = sjBool(it, t)
		case "id":
			r.ID = sjStr(it, t)
		case "parentId":
			r.ParentID = sjStr(it, t)
		case "message":
			if t == simdjson.TypeObject {
				o, err := it.Object(&d.obj[1])
				if err == nil {
					err = d.message(o)
				}
				if err != nil {
					return err
				}
			}
		case "payload":
			if t == simdjson.TypeObject {
				o, err := it.Object(&d.obj[1])
				if err == nil {
					err = d.payload(o)
				}
				if err != nil {
					return err
				}
			}
		}
	}
}

func (d *simdjsonDecoder) message(obj *simdjson.Object) error {
	m, it := &d.r.Message, &d.it[1]
	for {
		name, t, err := obj.NextElementBytes(it)
		if err != nil || t == simdjson.TypeNone {
			return err
		}
		switch string(name) {
		case "id":
			m.ID = sjStr(it, t)
		case "model":
			m.Model = sjStr(it, t)
		case "role":
			m.Role = sjStr(it, t)
		case "stop_reason":
			m.StopReason = sjStr(it, t)
		case "provider":
			m.Provider = sjStr(it, t)
		case "timestamp":
			m.Timestamp = sjInt(it, t)
		case "usage":
			if t == simdjson.TypeObject {
				o, err := it.Object(&d.obj[2])
				if err == nil {
					err = d.usage(o)
				}
				if err != nil {
					return err
				}
			}
		case "content":
			if t != simdjson.TypeArray {
				continue
			}
			a, err := it.Array(&d.arr)
			if err != nil {
				return err
			}
			d.elem = a.Iter()
			for {
				et := d.elem.Advance()
				if et == simdjson.TypeNone {
					break
				}
				m.Content = append(m.Content, block{})
				if et != simdjson.TypeObject {
					continue
				}
				o, err := d.elem.Object(&d.obj[2])
				if err == nil {
					err = d.block(o, &m.Content[len(m.Content)-1])
				}
				if err != nil {
					return err
				}
			}
		}
	}
}

func (d *simdjsonDecoder) usage(obj *simdjson.Object) error {
	u, it := &d.r.Message.Usage, &d.it[2]
	for {
		name, t, err := obj.NextElementBytes(it)
		if err != nil || t == simdjson.TypeNone {
			return err
		}
		switch string(name) {
		case "input_tokens":
			u.InputTokens = sjInt(it, t)
		case "output_tokens":
			u.OutputTokens = sjInt(it, t)
		case "cache_creation_input_tokens":
			u.CacheCreationInputTokens = sjInt(it, t)
		case "cache_read_input_tokens":
			u.CacheReadInputTokens = sjInt(it, t)
		case "input":
			u.Input = sjInt(it, t)
		case "output":
			u.Output = sjInt(it, t)
		case "cacheRead":
			u.CacheRead = sjInt(it, t)
		case "cacheWrite":
			u.CacheWrite = sjInt(it, t)
		case "cache_creation", "cost":
			if t != simdjson.TypeObject {
				continue
			}
			o, err := it.Object(&d.obj[3])
			if err != nil {
				return err
			}
			for {
				n2, t2, err := o.NextElementBytes(&d.it[3])
				if err != nil {
					return err
				}
				if t2 == simdjson.TypeNone {
					break
				}
				switch string(n2) {
				case "ephemeral_5m_input_tokens":
					u.CacheCreation.Ephemeral5m = sjInt(&d.it[3], t2)
				case "ephemeral_1h_input_tokens":
					u.CacheCreation.Ephemeral1h = sjInt(&d.it[3], t2)
				case "total":
					if string(name) == "cost" && (t2 == simdjson.TypeFloat || t2 == simdjson.TypeInt || t2 == simdjson.TypeUint) {
						u.Cost.Total, _ = d.it[3].Float()
					}
				}
			}
		}
	}
}

func (d *simdjsonDecoder) block(obj *simdjson.Object, b *block) error {
	it := &d.it[3]
	for {
		name, t, err := obj.NextElementBytes(it)
		if err != nil || t == simdjson.TypeNone {
			return err
		}
		switch string(name) {
		case "type":
			b.Type = sjStr(it, t)
		case "id":
			b.ID = sjStr(it, t)
		case "name":
			b.Name = sjStr(it, t)
		case "tool_use_id":
			b.ToolUseID = sjStr(it, t)
		case "is_error":
			b.IsError = sjBool(it, t)
		}
	}
}

func (d *simdjsonDecoder) payload(obj *simdjson.Object) error {
	p, it := &d.r.Payload, &d.it[1]
	for {
		name, t, err := obj.NextElementBytes(it)
		if err != nil || t == simdjson.TypeNone {
			return err
		}
		switch string(name) {
		case "type":
			p.Type = sjStr(it, t)
		case "id":
			p.ID = sjStr(it, t)
		case "model":
			p.Model = sjStr(it, t)
		case "info":
			if t != simdjson.TypeObject {
				continue
			}
			info, err := it.Object(&d.obj[2])
			if err != nil {
				return err
			}
			for {
				n2, t2, err := info.NextElementBytes(&d.it[2])
				if err != nil {
					return err
				}
				if t2 == simdjson.TypeNone {
					break
				}
				if string(n2) != "total_token_usage" || t2 != simdjson.TypeObject {
					continue
				}
				tot, err := d.it[2].Object(&d.obj[3])
				if err != nil {
					return err
				}
				tt := &p.Info.Total
				for {
					n3, t3, err := tot.NextElementBytes(&d.it[3])
					if err != nil {
						return err
					}
					if t3 == simdjson.TypeNone {
						break
					}
					switch string(n3) {
					case "input_tokens":
						tt.InputTokens = sjInt(&d.it[3], t3)
					case "cached_input_tokens":
						tt.CachedInputTokens = sjInt(&d.it[3], t3)
					case "output_tokens":
						tt.OutputTokens = sjInt(&d.it[3], t3)
					case "reasoning_output_tokens":
						tt.ReasoningOutputTokens = sjInt(&d.it[3], t3)
					case "total_tokens":
						tt.TotalTokens = sjInt(&d.it[3], t3)
					}
				}
			}
		}
	}
}
