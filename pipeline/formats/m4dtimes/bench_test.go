package m4dtimes_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/m4dtimes"
)

func BenchmarkParse(b *testing.B) {
	data, events := sdkFile(rand.New(rand.NewPCG(1, 2)), 7756297856, 300)
	lines := formattest.Lines(b, data)
	require.Len(b, lines, len(events))
	formattest.BenchParse(b, m4dtimes.New, "sessions/7756297856.jsonl", data, lines)
}
