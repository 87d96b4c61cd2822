package api_test

import (
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/internal/testutil/indextest"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/index/api"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
)

// The API's group_by=format shows Qwen Code and Kimi CLI like the other
// agents: a row each, with the calls and tokens their sessions count
// (the samples of testdata/corpus/generated/qwen and kimi).
func TestIndexer_API_UsageByFormatNewAgents(t *testing.T) {
	t.Parallel()
	files := indextest.ReadFiles(t, "../../../testdata/corpus/generated/qwen", "../../../testdata/corpus/generated/kimi")
	stream := indextest.Interleave(files, rand.New(rand.NewPCG(3, 3)))
	js := indextest.NewStream(t, bus.StreamConfig{})
	last := indextest.Publish(t, js, stream)
	ix, _ := indextest.RunIndexer(t, index.IndexerConfig{JS: js, Dir: t.TempDir(), Pricer: price.Default(), CommitInterval: 10 * time.Millisecond})
	indextest.WaitApplied(t, ix, last)
	srv := httptest.NewServer(api.Handler(ix, api.Config{}))
	defer srv.Close()
	var got struct {
		Rows []index.UsageRow `json:"rows"`
	}
	require.Equal(t, http.StatusOK, indextest.GetJSON(t, srv, "/api/usage?group_by=format", "", &got))
	rows := map[string][5]int64{}
	for _, r := range got.Rows {
		rows[r.Key] = [5]int64{r.Calls, r.InputTokens, r.OutputTokens, r.CacheReadTokens, r.UnpricedCalls}
	}
	require.Equal(t, map[string][5]int64{
		"qwen-code": {4, 7_400, 690, 32_500, 0},
		"kimi-cli":  {5, 5_100, 370, 32_500, 5},
	}, rows)
}
