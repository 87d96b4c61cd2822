package codebuff_test

import (
	"testing"

	"github.com/sessionpipe/sessionpipe/internal/testutil/golden"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/codebuff"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

func TestParse_Golden(t *testing.T) {
	golden.Run(t, "testdata", codebuff.New)
}

// parseDoc parses one chat-messages.json as package formats does, once it
// has found the document an array.
func parseDoc(cfg parse.Config, data []byte) ([]schema.Entry, []error) {
	elems, err := codebuff.Elements(data)
	if err != nil {
		return nil, []error{&schema.DecodeError{Path: cfg.Path, Err: err}}
	}
	return codebuff.ParseDocument(nil, cfg, data, elems)
}

// The chat case written as one pretty-printed document, and bad messages
// among good ones in a document: each located at its line of the file.
func TestParseDocument_Golden(t *testing.T) {
	golden.RunDocuments(t, "testdata", parseDoc)
}
