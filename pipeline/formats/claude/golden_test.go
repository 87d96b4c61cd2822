package claude_test

import (
	"testing"

	"github.com/sessionpipe/sessionpipe/internal/testutil/golden"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/claude"
)

func TestGolden(t *testing.T) {
	golden.Run(t, "testdata", claude.New)
}
