package codex_test

import (
	"testing"

	"github.com/sessionpipe/sessionpipe/internal/testutil/golden"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/codex"
)

func TestParser_Golden(t *testing.T) {
	golden.Run(t, "testdata", codex.New)
}
