package corpusgen

import (
	"strconv"
	"time"
)

// pi lines are version-3 session entries (badlogic/pi-mono
// session-manager.ts; key order as in testdata/corpus/pi): a session
// header, model and thinking-level changes, and message entries whose
// message is a user, assistant (with usage and cost) or toolResult
// message.

type piModel struct {
	api, provider, model string
	// USD per million tokens: input, output, cache read, cache write.
	in, out, read, write float64
}

var piModels = []piModel{
	{"anthropic-messages", "anthropic", "claude-opus-4-5", 5, 25, 0.5, 6.25},
	{"anthropic-messages", "anthropic", "claude-sonnet-4-5", 3, 15, 0.3, 3.75},
	{"openai-codex-responses", "openai-codex", "gpt-5.2-codex", 1.75, 14, 0.175, 0},
	{"ollama", "ollama", "qwen3.5:9b", 0, 0, 0, 0},
}

var piTools = []string{"read", "bash", "edit", "write", "read", "bash"}

type piSession struct {
	g       *gen
	id      string
	cwd     string
	model   piModel
	now     time.Time
	last    string // id of the last entry: the next entry's parentId
	context int
	started bool
	forkOf  string // parentSession of a fork's header
	plan
}

func newPiSession(seed uint64, start time.Time, cwd string) *piSession {
	g := newGen(seed)
	return &piSession{g: g, id: g.uuid(), cwd: cwd, model: piModels[g.intn(len(piModels))], now: start}
}

func (s *piSession) next(dst []byte, lim limits) ([]byte, string) {
	return s.plan.next(s.g, &s.now, dst, lim, s.turn)
}

// entry returns a new entry id, its parent and its timestamp.
func (s *piSession) entry(minMs, maxMs int) (id, parent string, ts []byte, t time.Time) {
	s.now = s.now.Add(time.Duration(s.g.between(minMs, maxMs)) * time.Millisecond)
	id, parent = s.g.hex(8), s.last
	s.last = id
	return id, parent, appendTime(nil, s.now), s.now
}

// head appends the common entry keys: type, id, parentId, timestamp.
func piHead(dst []byte, typ, id, parent string, ts []byte) []byte {
	dst = append(dst, `{"type":`...)
	dst = appendStr(dst, typ)
	dst = append(dst, `,"id":`...)
	dst = appendStr(dst, id)
	dst = append(dst, `,"parentId":`...)
	if parent == "" {
		dst = append(dst, "null"...)
	} else {
		dst = appendStr(dst, parent)
	}
	dst = append(dst, `,"timestamp":`...)
	return append(dst, ts...)
}

func (s *piSession) turn() {
	g := s.g
	if !s.started {
		s.started = true
		s.header()
		s.modelChange()
		s.thinkingLevel()
	}
	if g.chance(0.03) {
		s.model = piModels[g.intn(len(piModels))]
		s.modelChange()
	}
	s.user()
	calls := g.logUniform(1, 12)
	for i := range calls {
		tools := 0
		if i < calls-1 {
			tools = g.between(1, 2)
		}
		ids := s.assistant(tools)
		for _, id := range ids {
			s.toolResult(id)
		}
	}
}

func (s *piSession) header() {
	s.now = s.now.Add(time.Duration(s.g.between(10, 500)) * time.Millisecond)
	ts := appendTime(nil, s.now)
	s.add(lineSpec{render: func(dst, _ []byte, _ bool) []byte {
		dst = append(dst, `{"type":"session","version":3,"id":`...)
		dst = appendStr(dst, s.id)
		dst = append(dst, `,"timestamp":`...)
		dst = append(dst, ts...)
		dst = append(dst, `,"cwd":`...)
		dst = appendStr(dst, s.cwd)
		if s.forkOf != "" {
			dst = append(dst, `,"parentSession":`...)
			dst = appendStr(dst, s.forkOf)
		}
		return append(dst, '}')
	}})
}

func (s *piSession) modelChange() {
	id, parent, ts, _ := s.entry(5, 100)
	m := s.model
	s.add(lineSpec{render: func(dst, _ []byte, _ bool) []byte {
		dst = piHead(dst, "model_change", id, parent, ts)
		dst = append(dst, `,"provider":`...)
		dst = appendStr(dst, m.provider)
		dst = append(dst, `,"modelId":`...)
		dst = appendStr(dst, m.model)
		return append(dst, '}')
	}})
}

func (s *piSession) thinkingLevel() {
	id, parent, ts, _ := s.entry(5, 100)
	level := s.g.pick([]string{"off", "minimal", "low", "medium", "high"})
	s.add(lineSpec{render: func(dst, _ []byte, _ bool) []byte {
		dst = piHead(dst, "thinking_level_change", id, parent, ts)
		dst = append(dst, `,"thinkingLevel":`...)
		dst = appendStr(dst, level)
		return append(dst, '}')
	}})
}

func (s *piSession) user() {
	id, parent, ts, t := s.entry(5000, 600000)
	ms := t.UnixMilli() - int64(s.g.between(1, 20))
	s.add(lineSpec{slots: 1, style: styleProse, size: s.g.logUniform(10, 3000),
		render: func(dst, body []byte, _ bool) []byte {
			dst = piHead(dst, "message", id, parent, ts)
			dst = append(dst, `,"message":{"role":"user","content":[{"type":"text","text":"`...)
			dst = append(dst, body...)
			dst = append(dst, `"}],"timestamp":`...)
			dst = strconv.AppendInt(dst, ms, 10)
			return append(dst, "}}"...)
		}})
}

// assistant plans one assistant message (one API call) with tools tool
// calls and returns their ids.
func (s *piSession) assistant(tools int) []string {
	g := s.g
	id, parent, ts, t := s.entry(1000, 40000)
	ms := t.UnixMilli() - int64(g.between(500, 30000))
	m := s.model
	in, out := g.between(1, 12), g.logUniform(5, 6000)
	read, write := s.context, 0
	if g.chance(0.8) {
		write = g.logUniform(20, 20000)
	}
	s.context += write
	if s.context > 180000 {
		s.context = g.between(15000, 40000)
	}
	if m.write == 0 { // OpenAI-style providers report no cache writes
		in += write
		write = 0
	}
	thinking := g.chance(0.4)
	stop := "stop"
	calls := make([]string, tools)
	names := make([]string, tools)
	args := make([]string, tools)
	for i := range calls {
		calls[i] = g.token("toolu_01", 22)
		names[i] = g.pick(piTools)
		args[i] = s.cwd + "/" + g.pick(words) + ".ts"
		stop = "toolUse"
	}
	if g.chance(0.01) {
		stop = "aborted"
	}
	s.add(lineSpec{slots: 1, style: styleProse, size: g.logUniform(10, 5000),
		render: func(dst, body []byte, _ bool) []byte {
			dst = piHead(dst, "message", id, parent, ts)
			dst = append(dst, `,"message":{"role":"assistant","content":[`...)
			if thinking {
				dst = append(dst, `{"type":"thinking","thinking":"`...)
				dst = append(dst, body...)
				dst = append(dst, `","thinkingSignature":"reasoning"},{"type":"text","text":"Let me check that."}`...)
			} else {
				dst = append(dst, `{"type":"text","text":"`...)
				dst = append(dst, body...)
				dst = append(dst, `"}`...)
			}
			for i := range calls {
				dst = append(dst, `,{"type":"toolCall","id":`...)
				dst = appendStr(dst, calls[i])
				dst = append(dst, `,"name":`...)
				dst = appendStr(dst, names[i])
				dst = append(dst, `,"arguments":{"path":`...)
				dst = appendStr(dst, args[i])
				dst = append(dst, "}}"...)
			}
			dst = append(dst, `],"api":`...)
			dst = appendStr(dst, m.api)
			dst = append(dst, `,"provider":`...)
			dst = appendStr(dst, m.provider)
			dst = append(dst, `,"model":`...)
			dst = appendStr(dst, m.model)
			dst = append(dst, `,"usage":{"input":`...)
			dst = strconv.AppendInt(dst, int64(in), 10)
			dst = append(dst, `,"output":`...)
			dst = strconv.AppendInt(dst, int64(out), 10)
			dst = append(dst, `,"cacheRead":`...)
			dst = strconv.AppendInt(dst, int64(read), 10)
			dst = append(dst, `,"cacheWrite":`...)
			dst = strconv.AppendInt(dst, int64(write), 10)
			dst = append(dst, `,"totalTokens":`...)
			dst = strconv.AppendInt(dst, int64(in+out+read+write), 10)
			ci, co := float64(in)*m.in/1e6, float64(out)*m.out/1e6
			cr, cw := float64(read)*m.read/1e6, float64(write)*m.write/1e6
			dst = append(dst, `,"cost":{"input":`...)
			dst = strconv.AppendFloat(dst, ci, 'f', -1, 64)
			dst = append(dst, `,"output":`...)
			dst = strconv.AppendFloat(dst, co, 'f', -1, 64)
			dst = append(dst, `,"cacheRead":`...)
			dst = strconv.AppendFloat(dst, cr, 'f', -1, 64)
			dst = append(dst, `,"cacheWrite":`...)
			dst = strconv.AppendFloat(dst, cw, 'f', -1, 64)
			dst = append(dst, `,"total":`...)
			dst = strconv.AppendFloat(dst, ci+co+cr+cw, 'f', -1, 64)
			dst = append(dst, `}},"stopReason":`...)
			dst = appendStr(dst, stop)
			dst = append(dst, `,"timestamp":`...)
			dst = strconv.AppendInt(dst, ms, 10)
			return append(dst, "}}"...)
		}})
	return calls
}

func (s *piSession) toolResult(callID string) {
	g := s.g
	id, parent, ts, t := s.entry(20, 20000)
	ms := t.UnixMilli() - int64(g.between(0, 10))
	name := g.pick(piTools)
	style := styleCode
	if name == "bash" {
		style = styleShell
	}
	isErr := g.chance(0.05)
	s.add(lineSpec{slots: 1, style: style, size: g.logUniform(20, 30000),
		render: func(dst, body []byte, _ bool) []byte {
			dst = piHead(dst, "message", id, parent, ts)
			dst = append(dst, `,"message":{"role":"toolResult","toolCallId":`...)
			dst = appendStr(dst, callID)
			dst = append(dst, `,"toolName":`...)
			dst = appendStr(dst, name)
			dst = append(dst, `,"content":[{"type":"text","text":"`...)
			dst = append(dst, body...)
			dst = append(dst, `"}],"isError":`...)
			dst = strconv.AppendBool(dst, isErr)
			dst = append(dst, `,"timestamp":`...)
			dst = strconv.AppendInt(dst, ms, 10)
			return append(dst, "}}"...)
		}})
}
