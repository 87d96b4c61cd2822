package amp_test

import (
	"testing"

	"github.com/sessionpipe/sessionpipe/internal/testutil/golden"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/amp"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// parseDoc parses one document as package formats does.
func parseDoc(cfg parse.Config, data []byte) ([]schema.Entry, []error) {
	fields, err := parse.Fields(data)
	if err != nil {
		return nil, []error{&schema.DecodeError{Path: cfg.Path, Err: err}}
	}
	return amp.Parse(nil, cfg, data, fields)
}

func TestParse_Golden(t *testing.T) {
	golden.RunDocuments(t, "testdata", parseDoc)
}

var cfgText = parse.Config{Path: "T-s.json", Text: true}
