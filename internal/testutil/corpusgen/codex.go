package corpusgen

import (
	"strconv"
	"time"
)

// Codex lines follow the rollouts in testdata/corpus/codex/localpush
// (Codex Desktop 0.104): {"timestamp","type","payload"} with a
// session_meta first, then per task a task_started event, a turn_context
// per model call, response items (messages, reasoning, function and custom
// tool calls with their outputs) and token_count events carrying
// cumulative totals, some re-emitted unchanged.

var (
	codexModels   = []string{"gpt-5.3-codex", "gpt-5.2-codex", "gpt-5"}
	codexCommands = []string{`{"cmd":"rg -n \"func main\" .","workdir":"`, `{"cmd":"go test ./...","workdir":"`,
		`{"cmd":"git diff --stat","workdir":"`, `{"cmd":"sed -n '1,120p' README.md","workdir":"`}
)

type codexUsage struct{ input, cached, output, reasoning int }

type codexSession struct {
	g       *gen
	id      string
	cwd     string
	model   string
	now     time.Time
	started bool
	total   codexUsage // cumulative token usage of the thread
	used    float64    // rate-limit percentage
	forkID  string     // a fork's own thread id, written before the replay
	plan
}

func newCodexSession(seed uint64, start time.Time, cwd string) *codexSession {
	g := newGen(seed)
	return &codexSession{g: g, id: g.uuid7(start), cwd: cwd, model: g.pick(codexModels), now: start}
}

func (s *codexSession) next(dst []byte, lim limits) ([]byte, string) {
	return s.plan.next(s.g, &s.now, dst, lim, s.turn)
}

// line plans one rollout line; payload appends the payload object.
func (s *codexSession) line(minMs, maxMs int, sp lineSpec, typ string, payload func(dst, body []byte) []byte) {
	s.now = s.now.Add(time.Duration(s.g.between(minMs, maxMs)) * time.Millisecond)
	ts := appendTime(nil, s.now)
	sp.render = func(dst, body []byte, _ bool) []byte {
		dst = append(dst, `{"timestamp":`...)
		dst = append(dst, ts...)
		dst = append(dst, `,"type":`...)
		dst = appendStr(dst, typ)
		dst = append(dst, `,"payload":`...)
		dst = payload(dst, body)
		return append(dst, '}')
	}
	s.add(sp)
}

// strBody appends body as a JSON string.
func strBody(dst, body []byte) []byte {
	dst = append(dst, '"')
	dst = append(dst, body...)
	return append(dst, '"')
}

func (s *codexSession) meta(id string) {
	g := s.g
	start := appendTime(nil, s.now)
	commit := g.hex(40)
	s.line(1000, 6000, lineSpec{slots: 1, style: styleProse, size: g.logUniform(2000, 14000)}, "session_meta",
		func(dst, body []byte) []byte {
			dst = append(dst, `{"id":`...)
			dst = appendStr(dst, id)
			dst = append(dst, `,"timestamp":`...)
			dst = append(dst, start...)
			dst = append(dst, `,"cwd":`...)
			dst = appendStr(dst, s.cwd)
			dst = append(dst, `,"originator":"codex_cli_rs","cli_version":"0.104.0","source":"cli","model_provider":"openai","base_instructions":{"text":`...)
			dst = strBody(dst, body)
			dst = append(dst, `},"git":{"commit_hash":`...)
			dst = appendStr(dst, commit)
			dst = append(dst, `,"branch":"main","repository_url":"https://git.example.com/dev/app.git"}}`...)
			return dst
		})
}

func (s *codexSession) turn() {
	g := s.g
	if !s.started {
		s.started = true
		if s.forkID != "" {
			s.meta(s.forkID)
		}
		s.meta(s.id)
		s.tokenCount(false, false)
	}
	turnID := g.uuid7(s.now)
	s.line(10, 500, lineSpec{}, "event_msg", func(dst, _ []byte) []byte {
		dst = append(dst, `{"type":"task_started","turn_id":`...)
		dst = appendStr(dst, turnID)
		return append(dst, `,"model_context_window":258400,"collaboration_mode_kind":"default"}`...)
	})
	s.line(1, 20, lineSpec{slots: 1, style: styleProse, size: g.logUniform(10, 3000)}, "response_item",
		func(dst, body []byte) []byte {
			dst = append(dst, `{"type":"message","role":"user","content":[{"type":"input_text","text":`...)
			dst = strBody(dst, body)
			return append(dst, "}]}"...)
		})
	s.line(1, 20, lineSpec{slots: 1, style: styleProse, size: g.logUniform(10, 3000)}, "event_msg",
		func(dst, body []byte) []byte {
			dst = append(dst, `{"type":"user_message","message":`...)
			dst = strBody(dst, body)
			return append(dst, `,"images":[],"local_images":[],"text_elements":[]}`...)
		})
	calls := g.logUniform(1, 16)
	for i := range calls {
		s.turnContext(turnID)
		if g.chance(0.5) {
			s.reasoning()
		}
		if i == calls-1 {
			s.answer(turnID)
			break
		}
		s.toolCall()
		s.tokenCount(true, g.chance(0.5))
	}
	s.tokenCount(true, false)
}

func (s *codexSession) turnContext(turnID string) {
	model := s.model
	s.line(5, 200, lineSpec{slots: 1, style: styleProse, size: s.g.logUniform(200, 3000)}, "turn_context",
		func(dst, body []byte) []byte {
			dst = append(dst, `{"turn_id":`...)
			dst = appendStr(dst, turnID)
			dst = append(dst, `,"cwd":`...)
			dst = appendStr(dst, s.cwd)
			dst = append(dst, `,"approval_policy":"on-request","sandbox_policy":{"type":"workspace-write","writable_roots":[`...)
			dst = appendStr(dst, s.cwd)
			dst = append(dst, `],"network_access":false,"exclude_tmpdir_env_var":false,"exclude_slash_tmp":false},"model":`...)
			dst = appendStr(dst, model)
			dst = append(dst, `,"personality":"pragmatic","collaboration_mode":{"mode":"default","settings":{"model":`...)
			dst = appendStr(dst, model)
			dst = append(dst, `,"reasoning_effort":"high","developer_instructions":null}},"effort":"high","summary":"auto","user_instructions":`...)
			dst = strBody(dst, body)
			return append(dst, `,"truncation_policy":{"mode":"tokens","limit":10000}}`...)
		})
}

func (s *codexSession) reasoning() {
	g := s.g
	enc := g.token("gAAAAA", g.between(300, 3000))
	s.line(500, 20000, lineSpec{slots: 1, style: styleThink, size: g.logUniform(20, 600)}, "event_msg",
		func(dst, body []byte) []byte {
			dst = append(dst, `{"type":"agent_reasoning","text":`...)
			dst = strBody(dst, body)
			return append(dst, '}')
		})
	s.line(0, 3, lineSpec{slots: 1, style: styleThink, size: g.logUniform(20, 600)}, "response_item",
		func(dst, body []byte) []byte {
			dst = append(dst, `{"type":"reasoning","summary":[{"type":"summary_text","text":`...)
			dst = strBody(dst, body)
			dst = append(dst, `}],"content":null,"encrypted_content":`...)
			dst = appendStr(dst, enc)
			return append(dst, '}')
		})
}

func (s *codexSession) toolCall() {
	g := s.g
	call := g.token("call_", 24)
	if g.chance(0.25) {
		s.line(200, 30000, lineSpec{slots: 1, style: styleCode, size: g.logUniform(100, 12000)}, "response_item",
			func(dst, body []byte) []byte {
				dst = append(dst, `{"type":"custom_tool_call","status":"completed","call_id":`...)
				dst = appendStr(dst, call)
				dst = append(dst, `,"name":"apply_patch","input":`...)
				dst = strBody(dst, body)
				return append(dst, '}')
			})
		s.line(50, 3000, lineSpec{}, "response_item", func(dst, _ []byte) []byte {
			dst = append(dst, `{"type":"custom_tool_call_output","call_id":`...)
			dst = appendStr(dst, call)
			return append(dst, `,"output":"{\"output\":\"Success. Updated the following files:\\nM internal/app/server.go\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.0}}"}`...)
		})
		return
	}
	args := appendStr(nil, g.pick(codexCommands)+s.cwd+`","yield_time_ms":10000}`)
	s.line(200, 30000, lineSpec{}, "response_item", func(dst, _ []byte) []byte {
		dst = append(dst, `{"type":"function_call","name":"exec_command","arguments":`...)
		dst = append(dst, args...)
		dst = append(dst, `,"call_id":`...)
		dst = appendStr(dst, call)
		return append(dst, '}')
	})
	s.line(50, 60000, lineSpec{slots: 1, style: styleShell, size: g.logUniform(20, 20000)}, "response_item",
		func(dst, body []byte) []byte {
			dst = append(dst, `{"type":"function_call_output","call_id":`...)
			dst = appendStr(dst, call)
			dst = append(dst, `,"output":`...)
			dst = strBody(dst, body)
			return append(dst, '}')
		})
}

func (s *codexSession) answer(turnID string) {
	g := s.g
	size := g.logUniform(20, 4000)
	s.line(500, 20000, lineSpec{slots: 1, style: styleProse, size: size}, "event_msg",
		func(dst, body []byte) []byte {
			dst = append(dst, `{"type":"agent_message","message":`...)
			dst = strBody(dst, body)
			return append(dst, '}')
		})
	s.line(0, 3, lineSpec{slots: 1, style: styleProse, size: size}, "response_item",
		func(dst, body []byte) []byte {
			dst = append(dst, `{"type":"message","role":"assistant","content":[{"type":"output_text","text":`...)
			dst = strBody(dst, body)
			return append(dst, `}],"phase":"final_answer"}`...)
		})
	s.tokenCount(true, false)
	s.line(10, 400, lineSpec{slots: 1, style: styleProse, size: size}, "event_msg",
		func(dst, body []byte) []byte {
			dst = append(dst, `{"type":"task_complete","turn_id":`...)
			dst = appendStr(dst, turnID)
			dst = append(dst, `,"last_agent_message":`...)
			dst = strBody(dst, body)
			return append(dst, '}')
		})
}

// tokenCount plans a token_count event: with info after a model call
// (then the cumulative totals grow), without info at the start of a
// thread. again re-emits it unchanged with a later timestamp.
func (s *codexSession) tokenCount(info, again bool) {
	g := s.g
	var last codexUsage
	if info {
		last.input = g.logUniform(2000, 120000)
		last.cached = last.input * g.between(0, 95) / 100
		last.output = g.logUniform(10, 6000)
		last.reasoning = last.output * g.between(0, 80) / 100
		s.total.input += last.input
		s.total.cached += last.cached
		s.total.output += last.output
		s.total.reasoning += last.reasoning
	}
	total := s.total
	s.used += g.r.Float64() * 0.5
	used, resets := s.used, s.now.Unix()+int64(g.between(600, 18000))
	payload := func(dst, _ []byte) []byte {
		dst = append(dst, `{"type":"token_count","info":`...)
		if info {
			dst = append(dst, `{"total_token_usage":`...)
			dst = appendCodexUsage(dst, total)
			dst = append(dst, `,"last_token_usage":`...)
			dst = appendCodexUsage(dst, last)
			dst = append(dst, `,"model_context_window":258400}`...)
		} else {
			dst = append(dst, "null"...)
		}
		dst = append(dst, `,"rate_limits":{"limit_id":"codex","limit_name":null,"primary":{"used_percent":`...)
		dst = strconv.AppendFloat(dst, float64(int(used*10))/10, 'f', 1, 64)
		dst = append(dst, `,"window_minutes":300,"resets_at":`...)
		dst = strconv.AppendInt(dst, resets, 10)
		dst = append(dst, `},"secondary":{"used_percent":0.0,"window_minutes":10080,"resets_at":`...)
		dst = strconv.AppendInt(dst, resets+400000, 10)
		return append(dst, `},"credits":{"has_credits":false,"unlimited":false,"balance":null},"plan_type":null}}`...)
	}
	s.line(1, 50, lineSpec{}, "event_msg", payload)
	if again {
		s.line(100, 5000, lineSpec{}, "event_msg", payload)
	}
}

func appendCodexUsage(dst []byte, u codexUsage) []byte {
	dst = append(dst, `{"input_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.input), 10)
	dst = append(dst, `,"cached_input_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.cached), 10)
	dst = append(dst, `,"output_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.output), 10)
	dst = append(dst, `,"reasoning_output_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.reasoning), 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.input+u.output), 10)
	return append(dst, '}')
}
