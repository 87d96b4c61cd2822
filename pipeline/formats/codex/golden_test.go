package codex_test

import (
	"testing"

	"github.com/sessionpipe/sessionpipe/internal/golden"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/codex"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
)

func TestParser_Golden(t *testing.T) {
	golden.Run(t, "testdata", func(cfg parse.Config) golden.Parser { return codex.New(cfg) })
}
