package bus

import (
	"encoding/json"
	"strconv"

	"github.com/klauspost/compress/s2"
	"github.com/nats-io/nats.go"
	"github.com/zeebo/xxh3"
)

// BatchMsgWithRaw returns the batch message of BatchMsg as sessionpipe
// wrote it before the original lines travelled as raw chunk messages of
// their own: raw.Data as a second S2 block of the body, at byte
// Sessionpipe-Raw-At, described by Sessionpipe-Raw and hashed into the
// id with it. Tests use it to check that such streams are still read.
func BatchMsgWithRaw(prefix string, span BatchSpan, jsonl []byte, count int, raw *RawChunk) (*nats.Msg, error) {
	m, err := BatchMsg(prefix, span, jsonl, count)
	if err != nil {
		return nil, err
	}
	meta, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	at := len(m.Data)
	enc := s2.Encode(nil, raw.Data)
	body := append(append(batchBody(at+len(enc)), m.Data...), enc...) // pooled as BatchMsg's
	freeBody(m.Data)
	m.Data = body
	m.Header[HeaderRaw] = []string{string(meta)}
	m.Header[HeaderRawAt] = []string{strconv.Itoa(at)}
	m.Header[HeaderRawSum] = []string{strconv.FormatUint(xxh3.Hash(raw.Data), 16)}
	sum := xxh3.New()
	sum.Write(meta)
	sum.Write(body)
	m.Header[HeaderMsgID] = []string{batchID(span, sum.Sum64())}
	return m, nil
}
