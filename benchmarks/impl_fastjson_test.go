package benchmarks

import (
	"unsafe"

	"github.com/valyala/fastjson"
)

// fastjsonDecoder parses each line into fastjson's DOM with a reused
// Parser (which copies the line), then reads the fields by Get paths.
// fastjson checks the structure of the whole line but not the escapes
// or control characters inside the strings it is not asked for.
type fastjsonDecoder struct {
	p fastjson.Parser
	r record
}

func newFastjsonDecoder() decodeFunc {
	d := &fastjsonDecoder{}
	return d.decode
}

// fjStr returns the string at path, unescaped, aliasing the parser's
// memory (valid until the next Parse); "" when absent or not a string.
func fjStr(v *fastjson.Value, path ...string) string {
	b := v.GetStringBytes(path...)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

func (d *fastjsonDecoder) decode(c *corpus, visit func(*record)) error {
	for i, b := range c.lines {
		v, err := d.p.ParseBytes(b)
		if err != nil {
			return lineError(i, err)
		}
		if v.Type() != fastjson.TypeObject {
			return lineError(i, errNotObject)
		}
		r := &d.r
		*r = record{Message: message[[]block]{Content: r.Message.Content[:0]}}
		r.Type = fjStr(v, "type")
		r.UUID = fjStr(v, "uuid")
		r.ParentUUID = fjStr(v, "parentUuid")
		r.SessionID = fjStr(v, "sessionId")
		r.Timestamp = fjStr(v, "timestamp")
		r.RequestID = fjStr(v, "requestId")
		r.IsSidechain = v.GetBool("isSidechain")
		r.IsMeta = v.GetBool("isMeta")
		r.ID = fjStr(v, "id")
		r.ParentID = fjStr(v, "parentId")
		if m := v.Get("message"); m != nil && m.Type() == fastjson.TypeObject {
			d.message(m)
		}
		if p := v.Get("payload"); p != nil && p.Type() == fastjson.TypeObject {
			pl := &r.Payload
			pl.Type = fjStr(p, "type")
			pl.ID = fjStr(p, "id")
			pl.Model = fjStr(p, "model")
			if t := p.Get("info", "total_token_usage"); t != nil {
				pl.Info.Total = tokenTotals{
					InputTokens:           t.GetInt64("input_tokens"),
					CachedInputTokens:     t.GetInt64("cached_input_tokens"),
					OutputTokens:          t.GetInt64("output_tokens"),
					ReasoningOutputTokens: t.GetInt64("reasoning_output_tokens"),
					TotalTokens:           t.GetInt64("total_tokens"),
				}
			}
		}
		visit(r)
	}
	return nil
}

func (d *fastjsonDecoder) message(m *fastjson.Value) {
	msg := &d.r.Message
	msg.ID = fjStr(m, "id")
	msg.Model = fjStr(m, "model")
	msg.Role = fjStr(m, "role")
	msg.StopReason = fjStr(m, "stop_reason")
	msg.Provider = fjStr(m, "provider")
	msg.Timestamp = m.GetInt64("timestamp")
	if u := m.Get("usage"); u != nil && u.Type() == fastjson.TypeObject {
		msg.Usage = usage{
			InputTokens:              u.GetInt64("input_tokens"),
			OutputTokens:             u.GetInt64("output_tokens"),
			CacheCreationInputTokens: u.GetInt64("cache_creation_input_tokens"),
			CacheReadInputTokens:     u.GetInt64("cache_read_input_tokens"),
			CacheCreation: cacheCreation{
				Ephemeral5m: u.GetInt64("cache_creation", "ephemeral_5m_input_tokens"),
				Ephemeral1h: u.GetInt64("cache_creation", "ephemeral_1h_input_tokens"),
			},
			Input:      u.GetInt64("input"),
			Output:     u.GetInt64("output"),
			CacheRead:  u.GetInt64("cacheRead"),
			CacheWrite: u.GetInt64("cacheWrite"),
			Cost:       cost{Total: u.GetFloat64("cost", "total")},
		}
	}
	for _, b := range m.GetArray("content") {
		if b.Type() != fastjson.TypeObject {
			msg.Content = append(msg.Content, block{})
			continue
		}
		msg.Content = append(msg.Content, block{
			Type:      fjStr(b, "type"),
			ID:        fjStr(b, "id"),
			Name:      fjStr(b, "name"),
			ToolUseID: fjStr(b, "tool_use_id"),
			IsError:   b.GetBool("is_error"),
		})
	}
}
