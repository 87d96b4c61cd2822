package claude_test

import (
	"testing"

	"github.com/sessionpipe/sessionpipe/internal/golden"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/claude"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
)

func TestGolden(t *testing.T) {
	golden.Run(t, "testdata", func(cfg parse.Config) golden.Parser { return claude.New(cfg) })
}
