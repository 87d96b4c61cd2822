package corpusgen

import (
	"bytes"
	"strconv"
	"strings"
	"time"
)

// Claude Code lines follow the real v2.1.38/39 files in
// testdata/corpus/claude-code/spotter: the DAG envelope keys in their
// order, one content block per assistant line, several lines per API
// response sharing message.id and requestId with output_tokens growing,
// tool results with a toolUseResult, hook and bash progress lines,
// agent_progress mirrors of subagent lines, file-history-snapshot lines.

var (
	claudeModels   = []string{"claude-opus-4-6", "claude-sonnet-4-5-20250929", "claude-opus-4-6", "claude-haiku-4-5-20251001"}
	claudeVersions = []string{"2.1.39", "2.1.38", "2.1.39", "2.0.76"}
	claudeTools    = []string{"Bash", "Read", "Read", "Edit", "Grep", "Bash", "Write", "Glob", "Read", "Bash", "Grep", "Edit"}
	bashCommands   = []string{
		"go test ./... 2>&1 | tail -20", "git status --short", "ls -la", "npm run build", "cargo check",
		`grep -rn "TODO" --include="*.go" .`, "make lint", "git diff --stat HEAD~1", "python3 -m pytest -x -q",
	}
	projectDirs = []string{"/home/dev/projects/sessionpipe", "/home/dev/src/web-app", "/Users/marta/work/api-gateway",
		"/home/dev/projects/spotter-worktrees/spotter-gqc", "/srv/repos/data-pipeline", "/home/ci/build/agent tools"}
	branches = []string{"main", "master", "feature/tailer", "fix-offsets", ""}
)

// chain is one conversation thread of a Claude session: the main thread,
// or a subagent's sidechain written to its own file.
type chain struct {
	sidechain bool
	agentID   string
	dest      string
	last      string // uuid of the last DAG line, the next line's parentUuid
}

// apiCall is one Anthropic API response, spread over several lines.
type apiCall struct {
	msgID, reqID, model       string
	input, create, read       int
	create5m, create1h, final int
}

type claudeSession struct {
	g       *gen
	id      string
	cwd     string
	version string
	branch  string
	slug    string
	model   string
	now     time.Time
	ttl1h   bool // cache writes go to the 1-hour bucket
	nullSR  bool // stop_reason is always null, as in 2.1.39
	context int  // tokens in the prompt cache, growing over the session
	main    chain
	turns   int
	plan

	// While a subagent is planned, its assistant lines are mirrored
	// into mirrorParent as agent_progress lines of the Task mirrorTool.
	mirrorParent *chain
	mirrorTool   string
}

func newClaudeSession(seed uint64, start time.Time, cwd string) *claudeSession {
	g := newGen(seed)
	s := &claudeSession{
		g:       g,
		id:      g.uuid(),
		cwd:     cwd,
		version: g.pick(claudeVersions),
		branch:  g.pick(branches),
		model:   g.pick(claudeModels),
		now:     start,
		ttl1h:   g.chance(0.7),
	}
	s.nullSR = strings.HasPrefix(s.version, "2.1")
	if g.chance(0.8) {
		s.slug = g.pick(words) + "-" + g.pick(words) + "-" + g.pick(words)
	}
	return s
}

func (s *claudeSession) next(dst []byte, lim limits) ([]byte, string) {
	return s.plan.next(s.g, &s.now, dst, lim, s.turn)
}

func (s *claudeSession) tick(minMs, maxMs int) string {
	s.now = s.now.Add(time.Duration(s.g.between(minMs, maxMs)) * time.Millisecond)
	return string(appendTime(nil, s.now))
}

// env appends the DAG envelope up to and including the comma before
// "type" (or "message" on assistant lines).
func (s *claudeSession) env(dst []byte, c *chain, parent string) []byte {
	dst = append(dst, `{"parentUuid":`...)
	if parent == "" {
		dst = append(dst, "null"...)
	} else {
		dst = appendStr(dst, parent)
	}
	dst = append(dst, `,"isSidechain":`...)
	dst = strconv.AppendBool(dst, c.sidechain)
	dst = append(dst, `,"userType":"external","cwd":`...)
	dst = appendStr(dst, s.cwd)
	dst = append(dst, `,"sessionId":`...)
	dst = appendStr(dst, s.id)
	dst = append(dst, `,"version":`...)
	dst = appendStr(dst, s.version)
	dst = append(dst, `,"gitBranch":`...)
	dst = appendStr(dst, s.branch)
	if c.agentID != "" {
		dst = append(dst, `,"agentId":`...)
		dst = appendStr(dst, c.agentID)
	}
	if s.slug != "" {
		dst = append(dst, `,"slug":`...)
		dst = appendStr(dst, s.slug)
	}
	return append(dst, ',')
}

// link returns a fresh uuid for the next DAG line of c and its parent.
func (s *claudeSession) link(c *chain) (uuid, parent string) {
	uuid, parent = s.g.uuid(), c.last
	c.last = uuid
	return uuid, parent
}

// turn plans one user turn: the prompt, the API calls with their tool
// calls and results, and the end-of-turn bookkeeping.
func (s *claudeSession) turn() {
	g := s.g
	if s.turns == 0 {
		s.snapshot()
		s.hook(&s.main, "SessionStart", "SessionStart:startup", "")
	}
	s.turns++
	if g.chance(0.05) {
		s.metaUser(&s.main)
	}
	s.userPrompt(&s.main, g.chance(1.0/180))
	if g.chance(0.3) {
		s.snapshot()
	}
	calls := g.logUniform(1, 14)
	for i := range calls {
		s.call(&s.main, i == calls-1)
	}
	switch {
	case g.chance(0.5):
		s.turnDuration(&s.main)
	case g.chance(0.4):
		s.stopHooks(&s.main)
	}
}

// call plans one API response in chain c with its blocks and, unless it
// is the last of the turn, its tool calls and their results.
func (s *claudeSession) call(c *chain, last bool) {
	g := s.g
	a := &apiCall{
		msgID: g.token("msg_01", 22),
		reqID: g.token("req_011C", 18),
		model: s.model,
		input: g.between(1, 12),
	}
	if g.chance(0.8) {
		a.create = g.logUniform(20, 30000)
	}
	a.read = s.context
	s.context += a.create
	if s.context > 180000 { // auto-compaction empties the cache
		s.context = g.between(15000, 40000)
	}
	if s.ttl1h {
		a.create1h = a.create
	} else {
		a.create5m = a.create
	}
	a.final = g.logUniform(5, 8000)

	type block struct {
		kind string
		tool string
		id   string
	}
	var blocks []block
	if g.chance(0.4) {
		blocks = append(blocks, block{kind: "thinking"})
	}
	if last || g.chance(0.6) {
		blocks = append(blocks, block{kind: "text"})
	}
	if !last {
		for range g.between(1, 3) {
			tool := g.pick(claudeTools)
			if !c.sidechain && g.chance(0.03) {
				tool = "Task"
			}
			blocks = append(blocks, block{kind: "tool_use", tool: tool, id: g.token("toolu_01", 22)})
		}
	}
	complete := g.chance(0.85) // the last line carries the final usage
	uuids := make([]string, len(blocks))
	snapshot := g.between(1, 12) // what streaming lines report, as 8,8,8,…,780
	for i, b := range blocks {
		out := snapshot
		final := i == len(blocks)-1 && complete
		if final {
			out = max(a.final, snapshot)
		}
		uuids[i] = s.assistant(c, a, b.kind, b.tool, b.id, out, final)
	}
	for i, b := range blocks {
		if b.kind != "tool_use" {
			continue
		}
		if g.chance(0.2) {
			s.hook(c, "PreToolUse", "PreToolUse:"+b.tool, b.id)
		}
		if b.tool == "Bash" && g.chance(0.3) {
			s.bashProgress(c, b.id)
		}
		if b.tool == "Task" {
			s.subagent(c, b.id)
		}
		s.toolResult(c, b.tool, b.id, uuids[i])
	}
}

// assistant plans one assistant line holding one content block and
// returns its uuid.
func (s *claudeSession) assistant(c *chain, a *apiCall, kind, tool, toolID string, out int, final bool) string {
	g := s.g
	uuid, parent := s.link(c)
	ts := s.tick(300, 9000)
	sp := lineSpec{dest: c.dest, slots: 1}
	var input []byte // the tool_use input object, without a body slot
	var sig string
	switch kind {
	case "thinking":
		sp.style, sp.size = styleThink, g.logUniform(80, 8000)
		sig = g.token("Eq", g.between(200, 900))
	case "text":
		sp.style, sp.size = styleProse, g.logUniform(10, 6000)
	case "tool_use":
		input, sp.slots, sp.style, sp.size = s.toolInput(tool)
	}
	stop := "null"
	if final && !s.nullSR {
		stop = `"end_turn"`
		if kind == "tool_use" {
			stop = `"tool_use"`
		}
	}
	msg := func(dst, body []byte) []byte {
		dst = append(dst, `{"model":`...)
		dst = appendStr(dst, a.model)
		dst = append(dst, `,"id":`...)
		dst = appendStr(dst, a.msgID)
		dst = append(dst, `,"type":"message","role":"assistant","content":[`...)
		switch kind {
		case "thinking":
			dst = append(dst, `{"type":"thinking","thinking":"`...)
			dst = append(dst, body...)
			dst = append(dst, `","signature":`...)
			dst = appendStr(dst, sig)
			dst = append(dst, '}')
		case "text":
			dst = append(dst, `{"type":"text","text":"`...)
			dst = append(dst, body...)
			dst = append(dst, `"}`...)
		case "tool_use":
			dst = append(dst, `{"type":"tool_use","id":`...)
			dst = appendStr(dst, toolID)
			dst = append(dst, `,"name":`...)
			dst = appendStr(dst, tool)
			dst = append(dst, `,"input":`...)
			dst = appendInput(dst, input, body)
			dst = append(dst, `,"caller":{"type":"direct"}}`...)
		}
		dst = append(dst, `],"stop_reason":`...)
		dst = append(dst, stop...)
		dst = append(dst, `,"stop_sequence":null,"usage":{"input_tokens":`...)
		dst = strconv.AppendInt(dst, int64(a.input), 10)
		dst = append(dst, `,"cache_creation_input_tokens":`...)
		dst = strconv.AppendInt(dst, int64(a.create), 10)
		dst = append(dst, `,"cache_read_input_tokens":`...)
		dst = strconv.AppendInt(dst, int64(a.read), 10)
		dst = append(dst, `,"cache_creation":{"ephemeral_5m_input_tokens":`...)
		dst = strconv.AppendInt(dst, int64(a.create5m), 10)
		dst = append(dst, `,"ephemeral_1h_input_tokens":`...)
		dst = strconv.AppendInt(dst, int64(a.create1h), 10)
		dst = append(dst, `},"output_tokens":`...)
		dst = strconv.AppendInt(dst, int64(out), 10)
		dst = append(dst, `,"service_tier":"standard","inference_geo":`...)
		if final {
			dst = append(dst, `""`...)
		} else {
			dst = append(dst, `"not_available"`...)
		}
		return append(dst, "}}"...)
	}
	sp.render = func(dst, body []byte, _ bool) []byte {
		dst = s.env(dst, c, parent)
		dst = append(dst, `"message":`...)
		dst = msg(dst, body)
		dst = append(dst, `,"requestId":`...)
		dst = appendStr(dst, a.reqID)
		dst = append(dst, `,"type":"assistant","uuid":`...)
		dst = appendStr(dst, uuid)
		dst = append(dst, `,"timestamp":`...)
		dst = append(dst, ts...)
		return append(dst, '}')
	}
	s.add(sp)
	if c.sidechain { // mirrored into the parent file as agent_progress
		s.agentProgress(c, uuid, ts, sp, msg)
	}
	return uuid
}

// toolInput returns the input object of a tool call with a "\x00" where
// its body goes, and the body's slots, style and natural size.
func (s *claudeSession) toolInput(tool string) (input []byte, slots int, style textStyle, size int) {
	g := s.g
	path := s.cwd + "/" + g.pick(words) + "/" + g.pick(words) + ".go"
	switch tool {
	case "Bash":
		input = append(input, `{"command":`...)
		input = appendStr(input, g.pick(bashCommands))
		input = append(input, `,"description":`...)
		input = appendStr(input, "Run "+g.pick(words)+" checks")
		return append(input, '}'), 0, 0, 0
	case "Edit":
		input = append(input, `{"file_path":`...)
		input = appendStr(input, path)
		input = append(input, ",\"old_string\":\"\x00\",\"new_string\":\"\x00\"}"...)
		return input, 2, styleCode, g.logUniform(20, 3000)
	case "Write":
		input = append(input, `{"file_path":`...)
		input = appendStr(input, path)
		input = append(input, ",\"content\":\"\x00\"}"...)
		return input, 1, styleCode, g.logUniform(200, 20000)
	case "Grep":
		input = append(input, `{"pattern":`...)
		input = appendStr(input, `func \w+\(ctx context\.Context`)
		input = append(input, `,"path":`...)
		input = appendStr(input, s.cwd)
		input = append(input, `,"output_mode":"content","-n":true}`...)
		return input, 0, 0, 0
	case "Glob":
		input = append(input, `{"pattern":"**/*.go"}`...)
		return input, 0, 0, 0
	case "Task":
		input = append(input, `{"description":`...)
		input = appendStr(input, "Research "+g.pick(words))
		input = append(input, ",\"prompt\":\"\x00\",\"subagent_type\":\"general-purpose\"}"...)
		return input, 1, styleProse, g.logUniform(100, 2000)
	}
	input = append(input, `{"file_path":`...)
	input = appendStr(input, path)
	return append(input, '}'), 0, 0, 0
}

// appendInput appends input with every "\x00" replaced by body.
func appendInput(dst, input, body []byte) []byte {
	for {
		i := bytes.IndexByte(input, 0)
		if i < 0 {
			return append(dst, input...)
		}
		dst = append(dst, input[:i]...)
		dst = append(dst, body...)
		input = input[i+1:]
	}
}

// toolResult plans the user line carrying a tool's result.
func (s *claudeSession) toolResult(c *chain, tool, toolID, assistantUUID string) {
	g := s.g
	uuid, parent := s.link(c)
	ts := s.tick(50, 30000)
	isErr := tool == "Bash" && g.chance(0.08)
	sp := lineSpec{dest: c.dest, slots: 2, style: styleShell, size: g.logUniform(20, 24000)}
	path := s.cwd + "/" + g.pick(words) + ".go"
	agentID, tokens, dur := g.hex(7), g.logUniform(1000, 90000), g.logUniform(2000, 400000)
	switch tool {
	case "Read":
		sp.style = styleCode
		sp.image = g.chance(1.0 / 250)
	case "Grep":
		sp.style = styleCode
		sp.size = g.logUniform(20, 8000)
	case "Edit", "Write":
		sp.slots, sp.style = 1, styleCode
	case "Task":
		sp.style = styleProse
		sp.size = g.logUniform(200, 6000)
	}
	w, h := g.between(400, 2560), g.between(300, 1600)
	sp.render = func(dst, body []byte, image bool) []byte {
		dst = s.env(dst, c, parent)
		dst = append(dst, `"type":"user","message":{"role":"user","content":[{"tool_use_id":`...)
		dst = appendStr(dst, toolID)
		dst = append(dst, `,"type":"tool_result","content":`...)
		switch {
		case image:
			dst = append(dst, `[{"type":"image","source":{"type":"base64","data":"`...)
			dst = append(dst, body...)
			dst = append(dst, `","media_type":"image/png"}}]`...)
		case tool == "Edit" || tool == "Write":
			dst = appendStr(dst, "The file "+path+" has been updated successfully.")
		case tool == "Task":
			dst = append(dst, `[{"type":"text","text":"`...)
			dst = append(dst, body...)
			dst = append(dst, `"}]`...)
		default:
			dst = append(dst, '"')
			dst = append(dst, body...)
			dst = append(dst, '"')
		}
		dst = append(dst, `,"is_error":`...)
		dst = strconv.AppendBool(dst, isErr)
		dst = append(dst, `}]},"uuid":`...)
		dst = appendStr(dst, uuid)
		dst = append(dst, `,"timestamp":`...)
		dst = append(dst, ts...)
		dst = append(dst, `,"toolUseResult":`...)
		switch {
		case image:
			dst = append(dst, `{"type":"image","file":{"base64":"`...)
			dst = append(dst, body...)
			dst = append(dst, `","type":"image/png","originalSize":`...)
			dst = strconv.AppendInt(dst, int64(len(body)/4*3), 10)
			dst = append(dst, `,"dimensions":{"originalWidth":`...)
			dst = strconv.AppendInt(dst, int64(w), 10)
			dst = append(dst, `,"originalHeight":`...)
			dst = strconv.AppendInt(dst, int64(h), 10)
			dst = append(dst, `}}}`...)
		case tool == "Read":
			dst = append(dst, `{"type":"text","file":{"filePath":`...)
			dst = appendStr(dst, path)
			dst = append(dst, `,"content":"`...)
			dst = append(dst, body...)
			dst = append(dst, `","numLines":`...)
			dst = strconv.AppendInt(dst, int64(1+len(body)/40), 10)
			dst = append(dst, `,"startLine":1,"totalLines":`...)
			dst = strconv.AppendInt(dst, int64(1+len(body)/40), 10)
			dst = append(dst, `}}`...)
		case tool == "Grep":
			dst = append(dst, `{"mode":"content","numFiles":`...)
			dst = strconv.AppendInt(dst, int64(1+len(body)%17), 10)
			dst = append(dst, `,"filenames":[],"content":"`...)
			dst = append(dst, body...)
			dst = append(dst, `","numLines":`...)
			dst = strconv.AppendInt(dst, int64(1+len(body)/60), 10)
			dst = append(dst, '}')
		case tool == "Edit" || tool == "Write":
			dst = append(dst, `{"filePath":`...)
			dst = appendStr(dst, path)
			dst = append(dst, `,"originalFile":"`...)
			dst = append(dst, body...)
			dst = append(dst, `","structuredPatch":[{"oldStart":12,"oldLines":3,"newStart":12,"newLines":4,"lines":[" \tif err != nil {","-\t\treturn err","+\t\treturn fmt.Errorf(\"open: %w\", err)"," \t}"]}],"userModified":false,"replaceAll":false}`...)
		case tool == "Task":
			dst = append(dst, `{"status":"completed","prompt":"Research the code base","agentId":`...)
			dst = appendStr(dst, agentID)
			dst = append(dst, `,"content":[{"type":"text","text":"`...)
			dst = append(dst, body...)
			dst = append(dst, `"}],"totalDurationMs":`...)
			dst = strconv.AppendInt(dst, int64(dur), 10)
			dst = append(dst, `,"totalTokens":`...)
			dst = strconv.AppendInt(dst, int64(tokens), 10)
			dst = append(dst, `,"totalToolUseCount":5,"usage":{"input_tokens":4,"cache_creation_input_tokens":1210,"cache_read_input_tokens":`...)
			dst = strconv.AppendInt(dst, int64(tokens), 10)
			dst = append(dst, `,"output_tokens":997,"service_tier":"standard"}}`...)
		default:
			dst = append(dst, `{"stdout":"`...)
			dst = append(dst, body...)
			dst = append(dst, `","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false}`...)
		}
		dst = append(dst, `,"sourceToolAssistantUUID":`...)
		dst = appendStr(dst, assistantUUID)
		return append(dst, '}')
	}
	s.add(sp)
}

// userPrompt plans a real user input, a pasted image when image is set.
func (s *claudeSession) userPrompt(c *chain, image bool) {
	g := s.g
	uuid, parent := s.link(c)
	ts := s.tick(5000, 600000)
	blocks := g.chance(0.3)
	sp := lineSpec{dest: c.dest, slots: 1, style: styleProse, size: g.logUniform(10, 3000), image: image}
	sp.render = func(dst, body []byte, image bool) []byte {
		dst = s.env(dst, c, parent)
		dst = append(dst, `"type":"user","message":{"role":"user","content":`...)
		switch {
		case image:
			dst = append(dst, `[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"`...)
			dst = append(dst, body...)
			dst = append(dst, `"}},{"type":"text","text":"What is wrong in this screenshot?"}]`...)
		case blocks:
			dst = append(dst, `[{"type":"text","text":"`...)
			dst = append(dst, body...)
			dst = append(dst, `"}]`...)
		default:
			dst = append(dst, '"')
			dst = append(dst, body...)
			dst = append(dst, '"')
		}
		dst = append(dst, `},"uuid":`...)
		dst = appendStr(dst, uuid)
		dst = append(dst, `,"timestamp":`...)
		dst = append(dst, ts...)
		if image {
			dst = append(dst, `,"imagePasteIds":[1]`...)
		}
		if !c.sidechain {
			dst = append(dst, `,"thinkingMetadata":{"maxThinkingTokens":31999},"todos":[],"permissionMode":"default"`...)
		}
		return append(dst, '}')
	}
	s.add(sp)
}

// metaUser plans an isMeta user line (a local-command caveat).
func (s *claudeSession) metaUser(c *chain) {
	uuid, parent := s.link(c)
	ts := s.tick(100, 2000)
	s.add(lineSpec{dest: c.dest, render: func(dst, _ []byte, _ bool) []byte {
		dst = s.env(dst, c, parent)
		dst = append(dst, `"type":"user","message":{"role":"user","content":"<local-command-caveat>Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.</local-command-caveat>"},"isMeta":true,"uuid":`...)
		dst = appendStr(dst, uuid)
		dst = append(dst, `,"timestamp":`...)
		dst = append(dst, ts...)
		return append(dst, '}')
	}})
}

// hook plans a hook_progress line.
func (s *claudeSession) hook(c *chain, event, name, toolID string) {
	g := s.g
	uuid, parent := s.link(c)
	ts := s.tick(5, 400)
	if toolID == "" {
		toolID = g.uuid()
	}
	s.add(lineSpec{dest: c.dest, render: func(dst, _ []byte, _ bool) []byte {
		dst = s.env(dst, c, parent)
		dst = append(dst, `"type":"progress","data":{"type":"hook_progress","hookEvent":`...)
		dst = appendStr(dst, event)
		dst = append(dst, `,"hookName":`...)
		dst = appendStr(dst, name)
		dst = append(dst, `,"command":"$CLAUDE_PROJECT_DIR/.claude/hooks/check.sh"},"parentToolUseID":`...)
		dst = appendStr(dst, toolID)
		dst = append(dst, `,"toolUseID":`...)
		dst = appendStr(dst, toolID)
		dst = append(dst, `,"timestamp":`...)
		dst = append(dst, ts...)
		dst = append(dst, `,"uuid":`...)
		dst = appendStr(dst, uuid)
		return append(dst, '}')
	}})
}

// bashProgress plans a bash_progress line with partial command output.
func (s *claudeSession) bashProgress(c *chain, toolID string) {
	g := s.g
	uuid, parent := s.link(c)
	ts := s.tick(500, 5000)
	secs := g.between(1, 120)
	s.add(lineSpec{dest: c.dest, slots: 2, style: styleShell, size: g.logUniform(20, 4000),
		render: func(dst, body []byte, _ bool) []byte {
			dst = s.env(dst, c, parent)
			dst = append(dst, `"type":"progress","data":{"type":"bash_progress","output":"`...)
			dst = append(dst, body...)
			dst = append(dst, `","fullOutput":"`...)
			dst = append(dst, body...)
			dst = append(dst, `","elapsedTimeSeconds":`...)
			dst = strconv.AppendInt(dst, int64(secs), 10)
			dst = append(dst, `,"totalLines":`...)
			dst = strconv.AppendInt(dst, int64(1+len(body)/50), 10)
			dst = append(dst, `},"toolUseID":"bash-progress-0","parentToolUseID":`...)
			dst = appendStr(dst, toolID)
			dst = append(dst, `,"uuid":`...)
			dst = appendStr(dst, uuid)
			dst = append(dst, `,"timestamp":`...)
			dst = append(dst, ts...)
			return append(dst, '}')
		}})
}

// subagent plans a Task subagent: its sidechain lines go to their own
// file, and each of its assistant lines is mirrored into the parent.
func (s *claudeSession) subagent(parent *chain, toolID string) {
	g := s.g
	id := g.hex(7)
	sub := &chain{sidechain: true, agentID: id, dest: "subagents/agent-" + id + ".jsonl", last: ""}
	s.userPrompt(sub, false)
	s.mirrorParent, s.mirrorTool = parent, toolID
	calls := g.between(1, 4)
	for i := range calls {
		s.call(sub, i == calls-1)
	}
	s.mirrorParent = nil
}

// agentProgress plans the parent-file mirror of a subagent assistant
// line: a progress line whose data.message.message is the same message.
func (s *claudeSession) agentProgress(sub *chain, subUUID, ts string, src lineSpec, msg func(dst, body []byte) []byte) {
	c := s.mirrorParent
	if c == nil {
		return
	}
	uuid, parent := s.link(c)
	toolID := s.mirrorTool
	msgTool := s.g.token("agent_msg_01", 22)
	s.add(lineSpec{dest: c.dest, slots: src.slots, style: src.style, size: src.size,
		render: func(dst, body []byte, _ bool) []byte {
			dst = s.env(dst, c, parent)
			dst = append(dst, `"type":"progress","data":{"message":{"type":"assistant","message":`...)
			dst = msg(dst, body)
			dst = append(dst, `,"uuid":`...)
			dst = appendStr(dst, subUUID)
			dst = append(dst, `,"timestamp":`...)
			dst = append(dst, ts...)
			dst = append(dst, `},"normalizedMessages":[],"type":"agent_progress","prompt":"","agentId":`...)
			dst = appendStr(dst, sub.agentID)
			dst = append(dst, `},"toolUseID":`...)
			dst = appendStr(dst, msgTool)
			dst = append(dst, `,"parentToolUseID":`...)
			dst = appendStr(dst, toolID)
			dst = append(dst, `,"uuid":`...)
			dst = appendStr(dst, uuid)
			dst = append(dst, `,"timestamp":`...)
			dst = append(dst, ts...)
			return append(dst, '}')
		}})
}

// snapshot plans a file-history-snapshot line (no uuid, no sessionId).
func (s *claudeSession) snapshot() {
	g := s.g
	id := g.uuid()
	ts := s.tick(1, 200)
	files := g.between(0, 3)
	names := make([]string, files)
	for i := range names {
		names[i] = s.cwd + "/" + g.pick(words) + "/" + g.pick(words) + ".go"
		for j := range i { // keys of trackedFileBackups are distinct
			if names[j] == names[i] {
				names[i] += "." + strconv.Itoa(i)
			}
		}
	}
	backup := g.hex(16)
	s.add(lineSpec{render: func(dst, _ []byte, _ bool) []byte {
		dst = append(dst, `{"type":"file-history-snapshot","messageId":`...)
		dst = appendStr(dst, id)
		dst = append(dst, `,"snapshot":{"messageId":`...)
		dst = appendStr(dst, id)
		dst = append(dst, `,"trackedFileBackups":{`...)
		for i, n := range names {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendStr(dst, n)
			dst = append(dst, `:{"backupFileName":`...)
			dst = appendStr(dst, backup+"@v"+strconv.Itoa(i+1))
			dst = append(dst, `,"version":`...)
			dst = strconv.AppendInt(dst, int64(i+1), 10)
			dst = append(dst, `,"backupTime":`...)
			dst = append(dst, ts...)
			dst = append(dst, '}')
		}
		dst = append(dst, `},"timestamp":`...)
		dst = append(dst, ts...)
		dst = append(dst, `},"isSnapshotUpdate":`...)
		dst = strconv.AppendBool(dst, files > 0)
		return append(dst, '}')
	}})
}

// turnDuration plans the system line that ends a turn.
func (s *claudeSession) turnDuration(c *chain) {
	uuid, parent := s.link(c)
	ts := s.tick(10, 300)
	ms := s.g.logUniform(2000, 900000)
	s.add(lineSpec{dest: c.dest, render: func(dst, _ []byte, _ bool) []byte {
		dst = s.env(dst, c, parent)
		dst = append(dst, `"type":"system","subtype":"turn_duration","durationMs":`...)
		dst = strconv.AppendInt(dst, int64(ms), 10)
		dst = append(dst, `,"timestamp":`...)
		dst = append(dst, ts...)
		dst = append(dst, `,"uuid":`...)
		dst = appendStr(dst, uuid)
		return append(dst, `,"isMeta":false}`...)
	}})
}

// stopHooks plans a stop_hook_summary system line.
func (s *claudeSession) stopHooks(c *chain) {
	uuid, parent := s.link(c)
	ts := s.tick(10, 3000)
	toolID := s.g.uuid()
	s.add(lineSpec{dest: c.dest, render: func(dst, _ []byte, _ bool) []byte {
		dst = s.env(dst, c, parent)
		dst = append(dst, `"type":"system","subtype":"stop_hook_summary","hookCount":2,"hookInfos":[{"command":"$HOME/.claude/hooks/notify.sh mark"},{"command":"cd ${CLAUDE_PLUGIN_ROOT}/hooks && bun run ./dist/on-stop.js"}],"hookErrors":[],"preventedContinuation":false,"stopReason":"","hasOutput":true,"level":"suggestion","timestamp":`...)
		dst = append(dst, ts...)
		dst = append(dst, `,"uuid":`...)
		dst = appendStr(dst, uuid)
		dst = append(dst, `,"toolUseID":`...)
		dst = appendStr(dst, toolID)
		return append(dst, '}')
	}})
}

// encodeClaudeDir encodes a cwd as Claude Code names its project
// directory: '/', '.', ' ' and '~' become '-'.
func encodeClaudeDir(cwd string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '/', '.', ' ', '~', '\\', ':':
			return '-'
		}
		return r
	}, cwd)
}
