package m4dtimes_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/golden"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/internal/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/m4dtimes"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
)

func BenchmarkParse(b *testing.B) {
	data, events := sdkFile(rand.New(rand.NewPCG(1, 2)), 7756297856, 300)
	lines := formattest.Lines(b, data)
	require.Len(b, lines, len(events))
	formattest.BenchParse(b, func(cfg parse.Config) golden.Parser { return m4dtimes.New(cfg) },
		"sessions/7756297856.jsonl", data, lines)
}
