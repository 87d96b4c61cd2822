package opencode_test

import (
	"testing"

	"github.com/sessionpipe/sessionpipe/internal/testutil/golden"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/opencode"
)

func TestParse_Golden(t *testing.T) {
	golden.Run(t, "testdata", opencode.New)
}
