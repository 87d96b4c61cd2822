package hermes_test

import (
	"testing"

	"github.com/sessionpipe/sessionpipe/internal/testutil/golden"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/hermes"
)

func TestParse_Golden(t *testing.T) {
	golden.Run(t, "testdata", hermes.New)
}
