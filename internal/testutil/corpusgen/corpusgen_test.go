package corpusgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// requireWellFormed checks that line is one JSON object whose objects
// never repeat a key: encoding/json.Valid accepts duplicate keys, strict
// decoders (encoding/json/v2) reject them, and real files have none.
func requireWellFormed(tb testing.TB, line []byte, msgAndArgs ...any) {
	tb.Helper()
	var s jsonl.Scanner
	s.Reset(line)
	require.True(tb, s.More(), msgAndArgs...)
	require.Equal(tb, jsonl.Object, s.Peek(), msgAndArgs...)
	var walk func() string
	walk = func() string {
		switch {
		case s.EnterObject():
			keys := map[string]bool{}
			for s.NextField() {
				k := string(s.Key())
				if keys[k] {
					return "duplicate key " + k
				}
				keys[k] = true
				if msg := walk(); msg != "" {
					return msg
				}
			}
		case s.EnterArray():
			for s.NextElem() {
				if msg := walk(); msg != "" {
					return msg
				}
			}
		default:
			s.Skip()
		}
		return ""
	}
	require.Empty(tb, walk(), msgAndArgs...)
	require.False(tb, s.More(), msgAndArgs...)
	require.NoError(tb, s.Err(), msgAndArgs...)
}

func TestConfig_Validate(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		field string // "" when valid
	}{
		{"Default", Config{Bytes: 1}, ""},
		{"Mixed", Config{Mix: MixMixed, Bytes: 1 << 20}, ""},
		{"OneK", Config{Mix: Mix1K, Bytes: 1 << 20}, ""},
		{"UnknownMix", Config{Mix: "fluux", Bytes: 1}, "mix"},
		{"ZeroBytes", Config{Mix: MixPi}, "bytes"},
		{"NegativeBytes", Config{Mix: MixPi, Bytes: -1}, "bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireInvalidField(t, tt.cfg.Validate(), tt.field)
		})
	}
}

// requireInvalidField requires err to be nil when field is "", else a
// *ConfigError naming field and wrapping ErrInvalidConfig.
func requireInvalidField(tb testing.TB, err error, field string) {
	tb.Helper()
	if field == "" {
		require.NoError(tb, err)
		return
	}
	var ce *ConfigError
	require.ErrorAs(tb, err, &ce)
	assert.Equal(tb, field, ce.Field)
	assert.ErrorIs(tb, err, ErrInvalidConfig)
}

func TestLines_InvalidConfig(t *testing.T) {
	assert.Nil(t, Lines(Config{Mix: "nope", Bytes: 10}))
	require.Error(t, Write(&bytes.Buffer{}, Config{Bytes: 0}))
}

// TestFragments_Valid checks that every text fragment is valid content of
// a JSON string, so that any concatenation of them is too.
func TestFragments_Valid(t *testing.T) {
	for style, pool := range fragments {
		for _, f := range pool {
			var s string
			require.NoError(t, json.Unmarshal([]byte(`"`+f+`"`), &s), "style %d fragment %q", style, f)
		}
	}
}

func TestWrite_Deterministic(t *testing.T) {
	for _, mix := range []Mix{MixMixed, Mix1K, MixClaude, MixPi, MixCodex} {
		t.Run(string(mix), func(t *testing.T) {
			gen := func(seed uint64) []byte {
				var b bytes.Buffer
				require.NoError(t, Write(&b, Config{Mix: mix, Bytes: 512 << 10, Seed: seed}))
				return b.Bytes()
			}
			a, b, c := gen(7), gen(7), gen(8)
			assert.True(t, bytes.Equal(a, b), "same seed gave different bytes")
			assert.False(t, bytes.Equal(a, c), "different seeds gave the same bytes")
			assert.Equal(t, a, bytes.Join(append(Lines(Config{Mix: mix, Bytes: 512 << 10, Seed: 7}), nil), []byte("\n")))
		})
	}
}

func TestLines_ValidJSONAndSize(t *testing.T) {
	for _, mix := range []Mix{MixMixed, Mix1K, MixClaude, MixPi, MixCodex} {
		for _, size := range []int64{100 << 10, 1 << 20, 3 << 20} {
			t.Run(fmt.Sprintf("%s/bytes=%d", mix, size), func(t *testing.T) {
				lines := Lines(Config{Mix: mix, Bytes: size, Seed: uint64(size)})
				require.NotEmpty(t, lines)
				var total int64
				for i, l := range lines {
					total += int64(len(l)) + 1
					require.True(t, json.Valid(l), "line %d is not valid JSON: %.300s", i+1, l)
					requireWellFormed(t, l, "line %d: %.300s", i+1, l)
				}
				assert.InDelta(t, size, total, float64(size)*0.05, "total size")
			})
		}
	}
}

// mixedSample is a corpus large enough to hold image lines.
func mixedSample(tb testing.TB) [][]byte {
	tb.Helper()
	lines := Lines(Config{Mix: MixMixed, Bytes: 24 << 20, Seed: 1})
	require.NotEmpty(tb, lines)
	return lines
}

func TestLines_MixedContent(t *testing.T) {
	lines := mixedSample(t)
	var perFormat [numFormats]int
	var total, images, claudeLines int
	for i, l := range lines {
		total += len(l) + 1
		require.True(t, json.Valid(l), "line %d", i+1)
		requireWellFormed(t, l, "line %d: %.300s", i+1, l)
		var f int
		switch {
		case bytes.HasPrefix(l, []byte(`{"timestamp":`)):
			f = fmtCodex
		case bytes.HasPrefix(l, []byte(`{"type":"session","version":3`)), bytes.HasPrefix(l, []byte(`{"type":"message","id":`)),
			bytes.HasPrefix(l, []byte(`{"type":"model_change"`)), bytes.HasPrefix(l, []byte(`{"type":"thinking_level_change"`)):
			f = fmtPi
		default:
			f = fmtClaude
			claudeLines++
		}
		perFormat[f] += len(l) + 1
		if len(l) > 1<<20 {
			images++
			assert.LessOrEqual(t, len(l), maxImageLine+4096, "line %d", i+1)
			assert.Contains(t, string(l), `"type":"base64"`)
			assert.Contains(t, string(l), `iVBORw0KGg`, "PNG signature in base64")
		} else {
			assert.LessOrEqual(t, len(l), 56<<10, "line %d: only image lines exceed 50 KB", i+1)
		}
	}
	assert.InDelta(t, 0.8, float64(perFormat[fmtClaude])/float64(total), 0.04, "Claude share")
	assert.InDelta(t, 0.1, float64(perFormat[fmtPi])/float64(total), 0.03, "pi share")
	assert.InDelta(t, 0.1, float64(perFormat[fmtCodex])/float64(total), 0.03, "Codex share")
	assert.GreaterOrEqual(t, images, 1, "image lines")
	assert.LessOrEqual(t, images, 1+claudeLines/500, "image lines are rare")

	all := bytes.Join(lines, []byte("\n"))
	for _, want := range []string{`\n`, `\t`, `\"`, `\\`, `\u00e9`, `\ud83d\ude00`, `\u001b`, "é", "日本語", "😀", "→"} {
		assert.Contains(t, string(all), want)
	}
}

func TestLines_OneK(t *testing.T) {
	lines := Lines(Config{Mix: Mix1K, Bytes: 4 << 20, Seed: 3})
	var near int
	for i, l := range lines {
		require.Less(t, len(l), 4<<10, "line %d", i+1)
		if len(l) >= 700 && len(l) <= 1400 {
			near++
		}
	}
	assert.Greater(t, near, len(lines)*8/10, "most lines are about 1 KB")
}

// claudeLine is what the Claude checks read from a line.
type claudeLine struct {
	Type      string `json:"type"`
	UUID      string `json:"uuid"`
	Parent    string `json:"parentUuid"`
	SessionID string `json:"sessionId"`
	RequestID string `json:"requestId"`
	Sidechain bool   `json:"isSidechain"`
	Message   struct {
		ID      string          `json:"id"`
		Content json.RawMessage `json:"content"`
		Usage   struct {
			Output int `json:"output_tokens"`
		} `json:"usage"`
	} `json:"message"`
}

func TestLines_ClaudeShapes(t *testing.T) {
	lines := Lines(Config{Mix: MixClaude, Bytes: 4 << 20, Seed: 11})
	uuids := map[string]bool{}
	type group struct {
		req     string
		outputs []int
	}
	groups := map[string]*group{}
	types := map[string]int{}
	for i, l := range lines {
		var c claudeLine
		require.NoError(t, json.Unmarshal(l, &c), "line %d", i+1)
		types[c.Type]++
		if c.UUID != "" {
			require.False(t, uuids[c.UUID], "line %d: duplicate uuid %s", i+1, c.UUID)
			uuids[c.UUID] = true
			require.NotEmpty(t, c.SessionID, "line %d", i+1)
		}
		if c.Type != "assistant" {
			continue
		}
		var blocks []json.RawMessage
		require.NoError(t, json.Unmarshal(c.Message.Content, &blocks))
		require.Len(t, blocks, 1, "line %d: one content block per assistant line", i+1)
		g := groups[c.Message.ID]
		if g == nil {
			g = &group{req: c.RequestID}
			groups[c.Message.ID] = g
		}
		require.Equal(t, g.req, c.RequestID, "line %d: one requestId per message.id", i+1)
		g.outputs = append(g.outputs, c.Message.Usage.Output)
	}
	for _, typ := range []string{"user", "assistant", "progress", "system", "file-history-snapshot"} {
		assert.Positive(t, types[typ], "lines of type %s", typ)
	}
	multi, growing := 0, 0
	for _, g := range groups {
		if len(g.outputs) > 1 {
			multi++
			last := g.outputs[len(g.outputs)-1]
			if last > g.outputs[0] {
				growing++
			}
			for _, o := range g.outputs {
				assert.LessOrEqual(t, o, last, "the last line of a response holds the largest output")
			}
		}
	}
	assert.Greater(t, multi, len(groups)/4, "many responses span several lines")
	assert.Greater(t, growing, multi/2, "output_tokens grow while streaming")
}

func TestEncodeClaudeDir(t *testing.T) {
	assert.Equal(t, "-home-ci-build-agent-tools", encodeClaudeDir("/home/ci/build/agent tools"))
	assert.Equal(t, "-Users-marta-work-api-gateway", encodeClaudeDir("/Users/marta/work/api-gateway"))
}

func TestConfigError(t *testing.T) {
	err := Config{Mix: "x", Bytes: 1}.Validate()
	assert.Equal(t, "corpusgen: invalid configuration: mix=x", err.Error())
	assert.True(t, errors.Is(err, ErrInvalidConfig))
}

// TestClaude_SnapshotKeysDistinct renders many file-history snapshots:
// their trackedFileBackups keys are random paths that must not repeat.
func TestClaude_SnapshotKeysDistinct(t *testing.T) {
	s := newClaudeSession(1, epoch, projectDirs[0])
	for range 5000 {
		s.snapshot()
	}
	var buf []byte
	for i := range s.queue {
		buf = s.g.emit(buf[:0], &s.queue[i], limits{})
		requireWellFormed(t, buf, "snapshot %d: %s", i, buf)
	}
}
