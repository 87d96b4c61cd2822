package gemini_test

import (
	"testing"

	"github.com/sessionpipe/sessionpipe/internal/testutil/golden"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/gemini"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

func parseDocument(cfg parse.Config, data []byte) ([]schema.Entry, []error) {
	fields, err := parse.Fields(data)
	if err != nil {
		return nil, []error{&schema.DecodeError{Path: cfg.Path, Err: err}}
	}
	return gemini.ParseDocument(nil, cfg, data, fields)
}

// The whole-file session-*.json is read with the JSONL form's rules:
// testdata/document/input.json holds a metadata record, a user message,
// a reply with tokens and a notice.
func TestParseDocument_Golden(t *testing.T) {
	golden.RunDocuments(t, "testdata", parseDocument)
}
