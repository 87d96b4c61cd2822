package fluux

import (
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// attachments reads the attachments array due next in the scanner: objects
// {filename, mime_type, size}. null and [] give nil. size is a human string
// in Fluux ("926KB", "unknown"); a number is kept as its JSON text.
func (p *Parser) attachments(line jsonl.Line, off int) ([]schema.Attachment, error) {
	s := &p.s
	if s.Peek() == jsonl.Null {
		s.Skip()
		return nil, nil
	}
	if !s.EnterArray() {
		return nil, p.wrongType(line, off, "attachments")
	}
	var atts []schema.Attachment
	for s.NextElem() {
		s.Peek()
		eoff := s.Offset()
		if !s.EnterObject() {
			return nil, p.wrongType(line, eoff, "attachments")
		}
		var a schema.Attachment
		for s.NextField() {
			s.Peek()
			foff := s.Offset()
			var dst *string
			var name string
			switch string(s.Key()) {
			case "filename":
				dst, name = &a.Filename, "attachments.filename"
			case "mime_type":
				dst, name = &a.MimeType, "attachments.mime_type"
			case "size":
				dst, name = &a.Size, "attachments.size"
			default:
				continue
			}
			v := s.Value()
			switch v.Kind() {
			case jsonl.String:
				*dst = v.String()
			case jsonl.Null:
			case jsonl.Number:
				if dst != &a.Size {
					return nil, p.bad(line, foff, name)
				}
				*dst = string(v.Raw())
			default:
				if s.Err() != nil {
					return nil, parse.ScanError(&p.cfg, line, s)
				}
				return nil, p.bad(line, foff, name)
			}
		}
		atts = append(atts, a)
	}
	if s.Err() != nil {
		return nil, parse.ScanError(&p.cfg, line, s)
	}
	return atts, nil
}

// reaction reads the XEP-0444 reaction object due next in the scanner:
// {message_id, emojis[]}. null gives nil.
func (p *Parser) reaction(line jsonl.Line, off int) (*schema.Reaction, error) {
	s := &p.s
	if s.Peek() == jsonl.Null {
		s.Skip()
		return nil, nil
	}
	if !s.EnterObject() {
		return nil, p.wrongType(line, off, "reaction")
	}
	r := &schema.Reaction{Emojis: []string{}}
	for s.NextField() {
		s.Peek()
		foff := s.Offset()
		switch string(s.Key()) {
		case "message_id":
			v := s.Value()
			switch v.Kind() {
			case jsonl.String:
				r.MessageID = v.String()
			case jsonl.Null:
			default:
				if s.Err() != nil {
					return nil, parse.ScanError(&p.cfg, line, s)
				}
				return nil, p.bad(line, foff, "reaction.message_id")
			}
		case "emojis":
			if s.Peek() == jsonl.Null {
				continue
			}
			if !s.EnterArray() {
				return nil, p.wrongType(line, foff, "reaction.emojis")
			}
			r.Emojis = r.Emojis[:0]
			for s.NextElem() {
				s.Peek()
				eoff := s.Offset()
				v := s.Value()
				if v.Kind() != jsonl.String {
					if s.Err() != nil {
						return nil, parse.ScanError(&p.cfg, line, s)
					}
					return nil, p.bad(line, eoff, "reaction.emojis")
				}
				r.Emojis = append(r.Emojis, v.String())
			}
		}
	}
	if s.Err() != nil {
		return nil, parse.ScanError(&p.cfg, line, s)
	}
	return r, nil
}

// wrongType reports the value due next, at off, as not the container the
// field needs: a syntax error if the value is not even valid JSON, else a
// bad field named name.
func (p *Parser) wrongType(line jsonl.Line, off int, name string) error {
	s := &p.s
	s.Skip()
	if s.Err() != nil {
		return parse.ScanError(&p.cfg, line, s)
	}
	return p.bad(line, off, name)
}
