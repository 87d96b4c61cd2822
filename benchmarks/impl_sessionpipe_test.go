package benchmarks

import (
	"errors"
	"unsafe"

	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// errNotObject reports a line whose top-level value is not an object.
var errNotObject = errors.New("benchmarks: line is not a JSON object")

// scannerDecoder extracts records with pipeline/jsonl.Scanner: one pass
// over each line, strings as sub-slices of the line (unescaped into a
// reused buffer only when they hold escapes), the rest skipped and
// validated by Scanner.Finish. It allocates nothing once warm.
type scannerDecoder struct {
	s       jsonl.Scanner
	r       record
	scratch []byte // unescaped strings of the current line
}

func newScannerDecoder() decodeFunc {
	d := &scannerDecoder{}
	return d.decode
}

func (d *scannerDecoder) decode(c *corpus, visit func(*record)) error {
	s := &d.s
	for i, b := range c.lines {
		s.Reset(b)
		d.scratch = d.scratch[:0]
		for s.More() {
			if !s.EnterObject() {
				if s.Err() == nil {
					return lineError(i, errNotObject)
				}
				break
			}
			d.r = record{Message: message[[]block]{Content: d.r.Message.Content[:0]}}
			d.top()
			if !s.Finish() {
				break
			}
			visit(&d.r)
		}
		if err := s.Err(); err != nil {
			return lineError(i, err)
		}
	}
	return nil
}

// str reads a string value as encoding/json would decode it, without
// allocating: the raw bytes when they hold no escape and are valid UTF-8,
// else the unescaped text in the scratch buffer. Null and other kinds
// give "" (encoding/json leaves a string field untouched on null).
func (d *scannerDecoder) str() string {
	v := d.s.Value()
	if v.Kind() != jsonl.String {
		return ""
	}
	raw := v.Raw()
	if v.Plain() {
		return unsafe.String(unsafe.SliceData(raw), len(raw))
	}
	start := len(d.scratch)
	d.scratch = v.AppendText(d.scratch)
	t := d.scratch[start:]
	return unsafe.String(unsafe.SliceData(t), len(t))
}

func (d *scannerDecoder) int() int64 {
	n, _ := d.s.Value().Int()
	return n
}

func (d *scannerDecoder) bool() bool {
	b, _ := d.s.Value().Bool()
	return b
}

func (d *scannerDecoder) top() {
	s, r := &d.s, &d.r
	for s.NextField() {
		switch string(s.Key()) {
		case "type":
			r.Type = d.str()
		case "uuid":
			r.UUID = d.str()
		case "parentUuid":
			r.ParentUUID = d.str()
		case "sessionId":
			r.SessionID = d.str()
		case "timestamp":
			r.Timestamp = d.str()
		case "requestId":
			r.RequestID = d.str()
		case "isSidechain":
			r.IsSidechain = d.bool()
		case "isMeta":
			r.IsMeta = d.bool()
		case "id":
			r.ID = d.str()
		case "parentId":
			r.ParentID = d.str()
		case "message":
			if s.EnterObject() {
				d.message()
			}
		case "payload":
			if s.EnterObject() {
				d.payload()
			}
		}
	}
}

func (d *scannerDecoder) message() {
	s, m := &d.s, &d.r.Message
	for s.NextField() {
		switch string(s.Key()) {
		case "id":
			m.ID = d.str()
		case "model":
			m.Model = d.str()
		case "role":
			m.Role = d.str()
		case "stop_reason":
			m.StopReason = d.str()
		case "provider":
			m.Provider = d.str()
		case "timestamp":
			m.Timestamp = d.int()
		case "usage":
			if s.EnterObject() {
				d.usage()
			}
		case "content":
			if s.EnterArray() {
				for s.NextElem() {
					m.Content = append(m.Content, block{})
					if s.EnterObject() {
						d.block(&m.Content[len(m.Content)-1])
					}
				}
			}
		}
	}
}

func (d *scannerDecoder) usage() {
	s, u := &d.s, &d.r.Message.Usage
	for s.NextField() {
		switch string(s.Key()) {
		case "input_tokens":
			u.InputTokens = d.int()
		case "output_tokens":
			u.OutputTokens = d.int()
		case "cache_creation_input_tokens":
			u.CacheCreationInputTokens = d.int()
		case "cache_read_input_tokens":
			u.CacheReadInputTokens = d.int()
		case "cache_creation":
			if s.EnterObject() {
				for s.NextField() {
					switch string(s.Key()) {
					case "ephemeral_5m_input_tokens":
						u.CacheCreation.Ephemeral5m = d.int()
					case "ephemeral_1h_input_tokens":
						u.CacheCreation.Ephemeral1h = d.int()
					}
				}
			}
		case "input":
			u.Input = d.int()
		case "output":
			u.Output = d.int()
		case "cacheRead":
			u.CacheRead = d.int()
		case "cacheWrite":
			u.CacheWrite = d.int()
		case "cost":
			if s.EnterObject() {
				for s.NextField() {
					if string(s.Key()) == "total" {
						u.Cost.Total, _ = s.Value().Float()
					}
				}
			}
		}
	}
}

func (d *scannerDecoder) block(b *block) {
	s := &d.s
	for s.NextField() {
		switch string(s.Key()) {
		case "type":
			b.Type = d.str()
		case "id":
			b.ID = d.str()
		case "name":
			b.Name = d.str()
		case "tool_use_id":
			b.ToolUseID = d.str()
		case "is_error":
			b.IsError = d.bool()
		}
	}
}

func (d *scannerDecoder) payload() {
	s, p := &d.s, &d.r.Payload
	for s.NextField() {
		switch string(s.Key()) {
		case "type":
			p.Type = d.str()
		case "id":
			p.ID = d.str()
		case "model":
			p.Model = d.str()
		case "info":
			if !s.EnterObject() {
				continue
			}
			for s.NextField() {
				if string(s.Key()) != "total_token_usage" || !s.EnterObject() {
					continue
				}
				t := &p.Info.Total
				for s.NextField() {
					switch string(s.Key()) {
					case "input_tokens":
						t.InputTokens = d.int()
					case "cached_input_tokens":
						t.CachedInputTokens = d.int()
					case "output_tokens":
						t.OutputTokens = d.int()
					case "reasoning_output_tokens":
						t.ReasoningOutputTokens = d.int()
					case "total_tokens":
						t.TotalTokens = d.int()
					}
				}
			}
		}
	}
}
