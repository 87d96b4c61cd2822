package codebuff

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Detect reports whether the elements of a top-level JSON array (as
// [Elements] splits it) are a Codebuff chat: its first element is an
// object with a string "variant" or "role". An empty array is of no
// known shape (a chat written first empty is read again when it grows).
func Detect(elems []jsonl.Line) bool {
	if len(elems) == 0 {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(elems[0].Bytes, &m) != nil {
		return false
	}
	for _, k := range []string{"variant", "role"} {
		if v := bytes.TrimSpace(m[k]); len(v) > 0 && v[0] == '"' {
			return true
		}
	}
	return false
}

// ParseDocument appends the entries of one version of a chat-messages.json
// (data, split into elems by [Elements]) to dst: every message given to
// one new [Parser] in order, so that a message's id, or position, keys it
// the same way in every version. Entries and errors are located at the
// line of the file where their message starts (their EntryID "L<n>" still
// counts messages); with cfg.Raw an entry's Raw is its message compacted.
func ParseDocument(dst []schema.Entry, cfg parse.Config, data []byte, elems []jsonl.Line) ([]schema.Entry, []error) {
	p := New(cfg)
	lines := lineIndex{data: data}
	var errs []error
	for _, el := range elems {
		from := len(dst)
		var err error
		dst, err = p.Parse(dst, el)
		for i := from; i < len(dst); i++ {
			dst[i].Line = lines.at(dst[i].Offset)
			if dst[i].Raw != nil {
				var c bytes.Buffer
				if json.Compact(&c, dst[i].Raw) == nil {
					dst[i].Raw = c.Bytes()
				}
			}
		}
		if err != nil {
			var de *schema.DecodeError
			if errors.As(err, &de) {
				de.Line = lines.at(de.Offset)
			}
			errs = append(errs, err)
		}
	}
	return dst, errs
}

// lineIndex gives the line of an offset of data, for offsets that only
// grow.
type lineIndex struct {
	data []byte
	off  int64
	line int64
}

func (l *lineIndex) at(off int64) int64 {
	off = min(max(off, 0), int64(len(l.data)))
	if off < l.off {
		l.off, l.line = 0, 0
	}
	l.line += int64(bytes.Count(l.data[l.off:off], []byte{'\n'}))
	l.off = off
	return l.line + 1
}
