package bus

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sessionpipe/sessionpipe/schema"
)

// Message headers.
const (
	// HeaderMsgID is JetStream's deduplication header, set to the stable
	// key of what the message carries.
	HeaderMsgID = jetstream.MsgIDHeader

	// HeaderSchema carries [schema.Version] as a decimal number.
	HeaderSchema = "Sessionpipe-Schema"

	// MaxDeadHead is the most bytes of a bad line that [DeadMsg] keeps.
	MaxDeadHead = 4096
)

// EntryMsg returns the message that publishes e: subject
// [EntrySubject](prefix, e.Host, e.Format), body the canonical JSON of e
// appended to buf[:0], headers Nats-Msg-Id = [schema.Entry.Key] and
// Sessionpipe-Schema = [schema.Version].
//
// The body aliases buf when buf has room: the caller must not reuse buf
// until the message's done callback ran (the publisher keeps the message
// for re-sends). Pass nil to get a fresh buffer.
func EntryMsg(prefix string, e *schema.Entry, buf []byte) *nats.Msg {
	return &nats.Msg{
		Subject: EntrySubject(prefix, e.Host, string(e.Format)),
		Data:    e.AppendJSON(buf[:0]),
		Header: nats.Header{
			HeaderMsgID:  []string{e.Key()},
			HeaderSchema: []string{strconv.Itoa(SingleVersion)},
		},
	}
}

// DecodeEntry decodes an entry message into e. It takes the header and
// body rather than a message type so that it serves both a *nats.Msg
// (msg.Header, msg.Data) and a jetstream.Msg (m.Headers(), m.Data()).
//
// It fails with [ErrSchemaVersion] when the Sessionpipe-Schema header is
// missing or names another version, and with a wrapped JSON error when
// the body is not an entry; e is then zeroed. It decodes with an
// [EntryDecoder] from a pool.
func DecodeEntry(header nats.Header, data []byte, e *schema.Entry) error {
	if err := checkSchema(header); err != nil {
		*e = schema.Entry{}
		return err
	}
	d := decoders.Get().(*EntryDecoder)
	defer decoders.Put(d)
	return d.Decode(data, e)
}

// decoders keeps decoders, with their scanners and intern tables, from
// message to message.
var decoders = sync.Pool{New: func() any { return new(EntryDecoder) }}

// DeadLetter records a source line that could not be turned into entries
// (invalid JSON, an over-long line, invalid UTF-8, an unknown format), so
// that nothing is silently lost. Its JSON form uses the snake_case names
// below; Head is base64 in JSON, as it may not be valid UTF-8.
type DeadLetter struct {
	Host   string `json:"host"`             // host the tailer runs on
	Path   string `json:"path"`             // source file
	Line   int64  `json:"line"`             // 1-based line number
	Offset int64  `json:"offset"`           // byte offset of the line in the file
	Format string `json:"format,omitempty"` // detected format, "" when unknown
	Error  string `json:"error"`            // what was wrong
	Head   []byte `json:"head,omitempty"`   // first bytes of the line, at most MaxDeadHead
}

// DeadMsg returns the message that publishes d: subject
// [DeadSubject](prefix, d.Host), JSON body, header Nats-Msg-Id =
// "dead:" + host + ":" + path + ":" + offset (stable across re-reads of
// the same file) and Sessionpipe-Schema. A Head longer than [MaxDeadHead]
// is cut to it.
func DeadMsg(prefix string, d *DeadLetter) *nats.Msg {
	c := *d
	if len(c.Head) > MaxDeadHead {
		c.Head = c.Head[:MaxDeadHead]
	}
	// Marshalling a struct of strings, integers and a byte slice cannot
	// fail.
	data, _ := json.Marshal(&c)
	id := "dead:" + d.Host + ":" + d.Path + ":" + strconv.FormatInt(d.Offset, 10)
	return &nats.Msg{
		Subject: DeadSubject(prefix, d.Host),
		Data:    data,
		Header: nats.Header{
			HeaderMsgID:  []string{id},
			HeaderSchema: []string{strconv.Itoa(SingleVersion)},
		},
	}
}

// DecodeDeadLetter decodes the body of a dead-letter message.
func DecodeDeadLetter(data []byte) (DeadLetter, error) {
	var d DeadLetter
	if err := json.Unmarshal(data, &d); err != nil {
		return DeadLetter{}, fmt.Errorf("decode dead letter: %w", err)
	}
	return d, nil
}
