package codebuff_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/ccusage"
	"github.com/sessionpipe/sessionpipe/internal/testutil/formattest"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/codebuff"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/index"
	"github.com/sessionpipe/sessionpipe/pipeline/price"
	"github.com/sessionpipe/sessionpipe/schema"
)

const chatPath = "/h/.config/manicode/projects/proj/chats/2026-01-02T03-04-05.000Z/chat-messages.json"

func msgs(t *testing.T, lines ...string) []schema.Entry {
	t.Helper()
	return formattest.MustParse(t, codebuff.New(parse.Config{Path: chatPath}), lines...)
}

// The session is "<channel>/<project>/<chat id>" as ccusage names it; a
// message without a time takes the time its chat id names.
func TestParse_SessionFromPath(t *testing.T) {
	es := msgs(t, `{"id":"u1","variant":"user","content":"hi"}`)
	require.Equal(t, "manicode/proj/2026-01-02T03-04-05.000Z", es[0].SessionID)
	require.Equal(t, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), es[0].TS)
}

// Anthropic's cache counters are apart from the input; OpenAI's cached
// tokens are within the prompt and come out of the input.
func TestParse_CachedWithinPromptOutOfInput(t *testing.T) {
	es := msgs(t,
		`{"id":"a","variant":"ai","metadata":{"model":"claude-sonnet-4-5","usage":{"inputTokens":100,"outputTokens":5,"cacheReadInputTokens":1000,"cacheCreationInputTokens":20}}}`,
		`{"id":"b","variant":"ai","metadata":{"model":"gpt-5","usage":{"prompt_tokens":1200,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":1000}}}}`)
	require.Equal(t, schema.Usage{Input: 100, Output: 5, CacheRead: 1000, CacheWrite: 20}, *es[0].Usage)
	require.Equal(t, schema.Usage{Input: 200, Output: 5, CacheRead: 1000}, *es[1].Usage)
}

// Without metadata.usage, the last run step with usage counts, with its
// model.
func TestParse_RunStateLastStep(t *testing.T) {
	es := msgs(t, `{"id":"a","variant":"agent","metadata":{"runState":{"sessionState":{"mainAgentState":{"messageHistory":[{"role":"assistant","providerOptions":{"codebuff":{"model":"m-old","usage":{"prompt_tokens":9,"completion_tokens":9}}}},{"role":"assistant","providerOptions":{"codebuff":{"model":"openai/gpt-5","usage":{"prompt_tokens":500,"completion_tokens":40}}}},{"role":"user"}]}}}}}`)
	require.Equal(t, schema.Usage{Input: 500, Output: 40}, *es[0].Usage)
	require.Equal(t, "openai/gpt-5", es[0].Model)
}

// The document rewritten with a message again gives it the same key: it
// counts once.
func TestParse_RewrittenMessageSameKey(t *testing.T) {
	m := `{"id":"a","variant":"ai","metadata":{"model":"gpt-5","usage":{"inputTokens":10,"outputTokens":1}}}`
	first := msgs(t, m)
	second := msgs(t, `{"id":"u","variant":"user"}`, m)
	require.Equal(t, "codebuff:manicode/proj/2026-01-02T03-04-05.000Z:a", first[0].UsageKey)
	require.Equal(t, first[0].UsageKey, second[1].UsageKey)
}

// Elements splits a document into its messages, located in the file.
func TestElements(t *testing.T) {
	doc := []byte("[\n  {\"id\":\"a\"},\n  {\"id\":\"b\",\"x\":[1,2]}\n]\n")
	ls, err := codebuff.Elements(doc)
	require.NoError(t, err)
	require.Len(t, ls, 2)
	require.Equal(t, `{"id":"b","x":[1,2]}`, string(ls[1].Bytes))
	require.Equal(t, int64(bytes.Index(doc, []byte(`{"id":"b"`))), ls[1].Offset)
	require.Equal(t, int64(2), ls[1].Number)
	_, err = codebuff.Elements([]byte(`{"id":"a"}`))
	require.ErrorIs(t, err, parse.ErrBadField)
	_, err = codebuff.Elements([]byte(`[{"id":"a"},`))
	require.ErrorIs(t, err, parse.ErrBadField)
}

// The chat golden case as a document under a channel root, through the
// aggregator, and ccusage 20.0.24 on the same root. The same output, cache
// reads and writes (a1 once though written twice); ccusage's input is
// larger by the OpenAI-style cached tokens (1000 + 300) it leaves in the
// prompt while counting them as cache reads too.
func TestParse_ChatAsCcusage(t *testing.T) {
	root := filepath.Join(t.TempDir(), "manicode")
	dir := filepath.Join(root, "projects", "proj", "chats", "2026-01-02T03-04-05.000Z")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	lines := formattest.Lines(t, formattest.ReadFile(t, filepath.Join("testdata", "chat", "input.jsonl")))
	var doc bytes.Buffer
	doc.WriteString("[\n")
	for i, l := range lines {
		if i > 0 {
			doc.WriteString(",\n")
		}
		doc.Write(bytes.TrimSpace(l.Bytes))
	}
	doc.WriteString("\n]\n")
	path := filepath.Join(dir, "chat-messages.json")
	require.NoError(t, os.WriteFile(path, doc.Bytes(), 0o644))

	els, err := codebuff.Elements(doc.Bytes())
	require.NoError(t, err)
	p := codebuff.New(parse.Config{Path: path})
	agg := index.NewAggregator(price.Default())
	for _, l := range els {
		es, err := p.Parse(nil, l)
		require.NoError(t, err)
		for i := range es {
			agg.Add(&es[i])
		}
	}
	ss := agg.Sessions()
	require.Len(t, ss, 1)
	s := ss[0]
	require.Equal(t, "manicode/proj/2026-01-02T03-04-05.000Z", s.SessionID)
	require.Equal(t, [6]int64{500, 404, 2300, 20, 4, 2}, [6]int64{s.InputTokens, s.OutputTokens, s.CacheReadTokens, s.CacheWriteTokens, s.APICalls, s.UserMessages})

	theirs := ccusage.Totals(t, ccusage.Codebuff, root)
	require.Equal(t, [4]int64{500 + 1000 + 300, 404, 2300, 20}, [4]int64{theirs.Input, theirs.Output, theirs.CacheRead, theirs.CacheWrite})
}
