package gemini

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// DetectDocument reports whether the top-level fields of a JSON document
// are those of Gemini CLI's earlier whole-file recording (session-*.json,
// a ConversationRecord): sessionId, projectHash and a messages array.
func DetectDocument(fields map[string]parse.Element) bool {
	_, id := fields["sessionId"]
	_, hash := fields["projectHash"]
	m, ok := fields["messages"]
	return id && hash && ok && len(m.Raw) > 0 && m.Raw[0] == '['
}

// ParseDocument appends the entries of one version of a whole-file
// Gemini CLI recording (session-*.json: {sessionId, projectHash,
// startTime, lastUpdated, messages: […]}, which versions before the
// JSONL recording rewrote on every change) to dst. It reads the document
// as the JSONL form's lines: the metadata (every field but messages) as
// the first line, then each message as a line at its own place in the
// file, so that the rules are those of [Parser.Parse], entries are
// located at their message (offset and line in the file), and a message
// has the entry id, message id and usage key it has in the .jsonl the
// CLI converts the file to when it resumes the session (the call counts
// once across both). fields are [parse.Fields] of data.
func ParseDocument(dst []schema.Entry, cfg parse.Config, data []byte, fields map[string]parse.Element) ([]schema.Entry, []error) {
	p := New(cfg)
	p.fallback = strings.TrimSuffix(p.fallback, ".json")
	var errs []error
	parseLine := func(line jsonl.Line) {
		var err error
		dst, err = p.Parse(dst, line)
		if err != nil {
			errs = append(errs, err)
		}
	}
	// The metadata record: the top-level fields but messages, in order.
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if k != "messages" {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int { return int(fields[a].Offset - fields[b].Offset) })
	meta := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			meta = append(meta, ',')
		}
		name, _ := json.Marshal(k)
		meta = append(meta, name...)
		meta = append(meta, ':')
		meta = append(meta, fields[k].Raw...)
	}
	meta = append(meta, '}')
	parseLine(jsonl.Line{Bytes: meta, Offset: 0, End: 0, Number: 1})
	msgs, err := parse.Elements(data, fields["messages"])
	if err != nil {
		m := fields["messages"]
		errs = append(errs, &schema.DecodeError{Path: cfg.Path, Line: m.Line, Offset: m.Offset, Err: err})
	}
	for _, m := range msgs {
		parseLine(jsonl.Line{Bytes: m.Raw, Offset: m.Offset, End: m.Offset + int64(len(m.Raw)), Number: m.Line})
	}
	return dst, errs
}
