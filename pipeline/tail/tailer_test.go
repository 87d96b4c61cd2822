package tail

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/natstest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/redact"
	"github.com/sessionpipe/sessionpipe/schema"
)

func TestTailer_AppendAndPartialLine(t *testing.T) {
	h := newHarness(t)
	path := h.write("a/s1.jsonl", piFile("s1", 0, 5))
	h.start()
	h.waitMsgs(6)

	// A half-written line waits for its newline.
	line := piLine(6)
	h.appendTo(path, line[:20])
	h.stays(6)
	h.appendTo(path, line[20:]+piLine(7))
	msgs := h.stays(8)
	require.Equal(t, wantIDs("s1", 0, 7), ids(t, msgs, "s1"))
	for _, g := range msgs {
		require.Equal(t, path, g.entry.Path)
		require.Equal(t, "testhost", g.entry.Host)
	}
}

func TestTailer_RestartResumesFromCheckpoint(t *testing.T) {
	h := newHarness(t)
	path := h.write("s2.jsonl", piFile("s2", 0, 10))
	h.start()
	h.waitMsgs(11)
	h.stop()
	sentBefore := h.pub.Stats()

	h.appendTo(path, piFile("s2", 11, 15))
	h.start()
	msgs := h.stays(16)
	require.Equal(t, wantIDs("s2", 0, 15), ids(t, msgs, "s2"))
	// Only the new lines were sent: the checkpoint, not the duplicate
	// window, kept the first ten.
	require.Equal(t, int64(5), h.tl.Metrics().Snapshot().Entries)
	require.Zero(t, h.pub.Stats().Duplicates-sentBefore.Duplicates)
}

func TestTailer_FromEnd(t *testing.T) {
	h := newHarness(t)
	path := h.write("s3.jsonl", piFile("s3", 0, 4))
	h.start(func(c *Config) { c.FromEnd = true })
	h.settle(true)
	require.Empty(t, h.stream())
	h.appendTo(path, piLine(5))
	msgs := h.stays(1)
	require.Equal(t, []string{"e000005"}, ids(t, msgs, "s3"))
}

func TestTailer_RenameIsNotReadAgain(t *testing.T) {
	h := newHarness(t)
	path := h.write("agents/main/sessions/s4.jsonl", piFile("s4", 0, 3))
	h.start()
	h.waitMsgs(4)
	// OpenClaw archives a transcript by renaming it.
	archived := path + ".reset.2026-03-20T06-34-44.520Z"
	require.NoError(t, os.Rename(path, archived))
	require.Eventually(t, func() bool { return h.tl.Metrics().Snapshot().Renames == 1 }, 10*time.Second, 20*time.Millisecond)
	h.appendTo(archived, piLine(4))
	msgs := h.stays(5)
	require.Equal(t, wantIDs("s4", 0, 4), ids(t, msgs, "s4"))
	require.Equal(t, archived, msgs[4].entry.Path)
	require.Equal(t, int64(5), h.tl.Metrics().Snapshot().Entries)
}

func TestTailer_TruncateAndRewrite(t *testing.T) {
	h := newHarness(t)
	path := h.write("s5.jsonl", piFile("s5", 0, 6))
	h.start()
	h.waitMsgs(7)
	// Rewritten in place (gateway compaction keeps the last lines): the
	// kept lines were published already and are dropped as duplicates,
	// the new one is published.
	var b strings.Builder
	for i := 4; i <= 6; i++ {
		b.WriteString(piLine(i))
	}
	b.WriteString(piLine(7))
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	msgs := h.stays(8)
	require.Equal(t, wantIDs("s5", 0, 7), ids(t, msgs, "s5"))
	require.GreaterOrEqual(t, h.tl.Metrics().Snapshot().Rewrites, int64(1))
}

func TestTailer_ReplacedAtSamePath(t *testing.T) {
	h := newHarness(t)
	path := h.write("s6.jsonl", piFile("s6", 0, 2))
	h.start()
	h.waitMsgs(3)
	// A new file (new inode) takes the path, as after a delete and
	// re-create or an atomic replace.
	tmp := path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, []byte(piFile("s6b", 0, 2)), 0o644))
	require.NoError(t, os.Rename(tmp, path))
	msgs := h.stays(6)
	require.Equal(t, wantIDs("s6", 0, 2), ids(t, msgs, "s6"))
	require.Equal(t, wantIDs("s6b", 0, 2), ids(t, msgs, "s6b"))
}

func TestTailer_DeletedFile(t *testing.T) {
	h := newHarness(t)
	path := h.write("s7.jsonl", piFile("s7", 0, 2))
	other := h.write("s8.jsonl", piFile("s8", 0, 1))
	h.start()
	h.waitMsgs(5)
	require.NoError(t, os.Remove(path))
	h.appendTo(other, piLine(2))
	msgs := h.stays(6)
	require.Equal(t, wantIDs("s8", 0, 2), ids(t, msgs, "s8"))
	h.stop()
	cp, err := OpenCheckpoints(h.state)
	require.NoError(t, err)
	states, err := cp.Load()
	require.NoError(t, err)
	require.Len(t, states, 1, "the deleted file's checkpoint is gone")
	require.Equal(t, other, states[0].Path)
}

func TestTailer_NewDirectoryAndFile(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.settle(false) // the first scan is done: the directory is new to it
	h.write("new/deep/dir/s9.jsonl", piFile("s9", 0, 3))
	msgs := h.waitMsgs(4)
	require.Equal(t, wantIDs("s9", 0, 3), ids(t, msgs, "s9"))
}

func TestTailer_BadAndLongLinesGoToDeadLetters(t *testing.T) {
	h := newHarness(t)
	long := `{"type":"message","id":"long","message":{"role":"user","content":"` + strings.Repeat("x", 5000) + `"}}` + "\n"
	h.write("s10.jsonl", piHeader("s10")+piLine(1)+`{"type":"message","id":broken}`+"\n"+long+piLine(2))
	h.start(func(c *Config) { c.MaxLineBytes = 4096 })
	msgs := h.stays(5)
	require.Equal(t, wantIDs("s10", 0, 2), ids(t, msgs, "s10"))
	var dead []*bus.DeadLetter
	for _, g := range msgs {
		if g.dead != nil {
			dead = append(dead, g.dead)
		}
	}
	require.Len(t, dead, 2)
	require.Equal(t, int64(3), dead[0].Line)
	require.Contains(t, string(dead[0].Head), "broken")
	require.Equal(t, int64(4), dead[1].Line)
	require.Contains(t, dead[1].Error, "exceeds -max-line-bytes 4096")
	require.Equal(t, int64(2), h.tl.Metrics().Snapshot().BadLines)
}

func TestTailer_SkipsNonTranscripts(t *testing.T) {
	h := newHarness(t)
	h.write("alice@example.com/knowledge.jsonl", `{"key":"k","content":"a fact","ts":"2026-01-01T00:00:00Z"}`+"\n")
	h.write("s11.jsonl", piFile("s11", 0, 1))
	h.start()
	h.stays(2)
	require.Eventually(t, func() bool { return h.tl.Metrics().Snapshot().Skipped == 1 }, 5*time.Second, 20*time.Millisecond)
	h.stop()
	cp, _ := OpenCheckpoints(h.state)
	states, err := cp.Load()
	require.NoError(t, err)
	skipped := 0
	for _, s := range states {
		if s.Skipped {
			skipped++
			require.Equal(t, "knowledge.jsonl", filepath.Base(s.Path))
		}
	}
	require.Equal(t, 1, skipped, "remembered across restarts")
}

// An OpenClaw repair backup (<file>.jsonl.bak-<pid>-<ms>) is followed;
// every other file under a watch is either followed or counted as left
// out by its name.
func TestTailer_LeftOutByName(t *testing.T) {
	h := newHarness(t)
	h.write("s13.jsonl.bak-41873-1774012345678", piFile("s13", 0, 1))
	h.write("s13.trajectory-path.json", `{"traceSchema":"openclaw-trajectory-pointer"}`+"\n")
	h.write("notes.txt", "x\n")
	h.start()
	msgs := h.stays(2)
	require.Equal(t, wantIDs("s13", 0, 1), ids(t, msgs, "s13"))
	natstest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		if n := h.tl.Metrics().Snapshot().SkippedNames; n != 2 {
			return fmt.Errorf("skipped by name: %d, want 2", n)
		}
		return nil
	})
}

// An OpenClaw trajectory is followed like any transcript: detected from
// its content, published under its own format, its appended lines read
// live; with no transcript of its session on disk its run totals count.
func TestTailer_FollowsTrajectory(t *testing.T) {
	h := newHarness(t)
	ev := func(seq int, typ, data string) string {
		return fmt.Sprintf(`{"traceSchema":"openclaw-trajectory","schemaVersion":1,"traceId":"s14","source":"runtime","type":%q,"ts":"2026-09-04T10:00:%02d.000Z","seq":%d,"sessionId":"s14","runId":"r1","data":%s}`+"\n", typ, seq, seq, data)
	}
	path := h.write("s14.trajectory.jsonl", ev(1, "session.started", `{}`)+ev(2, "prompt.submitted", `{"prompt":"hi"}`))
	h.start()
	h.waitMsgs(2)
	h.appendTo(path, ev(3, "model.completed", `{"usage":{"input":10,"output":20,"cacheRead":30,"cacheWrite":40,"total":100}}`))
	msgs := h.waitMsgs(3)
	var total *schema.Entry
	for i := range msgs {
		require.Equal(t, schema.FormatTrajectory, msgs[i].entry.Format)
		if msgs[i].entry.Subtype == "run_total" {
			total = &msgs[i].entry
		}
	}
	require.NotNil(t, total, "the run total of the appended line")
	require.Equal(t, int64(100), total.Usage.Total())
}

// A Gemini CLI chat file is followed: detected from its metadata line,
// published as gemini-cli, its appended lines read live; the copy of a
// message that brings its tokens carries the usage under the message's
// key.
func TestTailer_FollowsGeminiCLI(t *testing.T) {
	h := newHarness(t)
	msg := func(tokens string) string {
		return `{"id":"g1","timestamp":"2026-09-01T09:00:05.000Z","type":"gemini","content":"Hi","model":"gemini-2.5-pro"` + tokens + "}\n"
	}
	path := h.write("session-2026-09-01T09-00-5b0e8c52.jsonl",
		`{"sessionId":"5b0e8c52","projectHash":"3a7b","startTime":"2026-09-01T09:00:00.000Z","lastUpdated":"2026-09-01T09:00:00.000Z"}`+"\n"+
			`{"id":"u1","timestamp":"2026-09-01T09:00:01.000Z","type":"user","content":[{"text":"hello"}]}`+"\n")
	h.start()
	h.waitMsgs(2)
	h.appendTo(path, msg("")+msg(`,"tokens":{"input":1200,"output":15,"cached":800,"thoughts":20,"tool":0,"total":1235}`))
	msgs := h.waitMsgs(4)
	var counted *schema.Entry
	for i := range msgs {
		require.Equal(t, schema.FormatGeminiCLI, msgs[i].entry.Format)
		require.Equal(t, "5b0e8c52", msgs[i].entry.SessionID)
		if msgs[i].entry.Usage != nil {
			counted = &msgs[i].entry
		}
	}
	require.NotNil(t, counted, "the usage of the appended copy")
	require.True(t, counted.Meta, "a copy of message g1")
	require.Equal(t, "gemini-cli:5b0e8c52:g1", counted.UsageKey)
	require.Equal(t, schema.Usage{Input: 400, Output: 35, CacheRead: 800, Reasoning: 20}, *counted.Usage)
}

// A Copilot CLI session resumed while the tailer runs: the appended leg's
// shutdown is read as it is written and counts only what the leg added.
func TestTailer_FollowsCopilot(t *testing.T) {
	h := newHarness(t)
	ev := func(id, typ, data string) string {
		return fmt.Sprintf(`{"type":%q,"data":%s,"id":%q,"timestamp":"2026-11-01T10:00:00.000Z","parentId":null}`+"\n", typ, data, id)
	}
	use := func(in, out int) string {
		return fmt.Sprintf(`{"modelMetrics":{"gpt-5.4":{"usage":{"inputTokens":%d,"outputTokens":%d}}}}`, in, out)
	}
	path := h.write(filepath.Join("s15", "events.jsonl"),
		ev("e1", "session.start", `{"sessionId":"s15","producer":"copilot-agent"}`)+ev("e2", "session.shutdown", use(100, 10)))
	h.start()
	h.waitMsgs(2)
	h.appendTo(path, ev("e3", "session.resume", `{}`)+ev("e4", "session.shutdown", use(250, 30)))
	msgs := h.waitMsgs(4)
	var leg *schema.Entry
	for i := range msgs {
		require.Equal(t, schema.FormatCopilot, msgs[i].entry.Format)
		if msgs[i].entry.EntryID == "e4:gpt-5.4" {
			leg = &msgs[i].entry
		}
	}
	require.NotNil(t, leg, "the appended leg")
	require.Equal(t, schema.Usage{Input: 150, Output: 20}, *leg.Usage)
	require.Equal(t, "copilot:s15:e4:gpt-5.4", leg.UsageKey)
}

// A Grok Build CLI session's updates.jsonl grows as the turns complete:
// the tailer follows it, and a turn's usage reaches the stream with its
// model's usage key; the session is the directory's name, the project its
// parent's (URL-decoded).
func TestTailer_FollowsGrok(t *testing.T) {
	h := newHarness(t)
	up := func(ev, update string) string {
		return fmt.Sprintf(`{"timestamp":1785000000,"method":"_x.ai/session/update","params":{"sessionId":"g16","_meta":{"eventId":%q},"update":%s}}`+"\n", ev, update)
	}
	turn := func(in, out int) string {
		return fmt.Sprintf(`{"sessionUpdate":"turn_completed","usage":{"inputTokens":%d,"outputTokens":%d,"modelUsage":{"grok-4.5-build":{"inputTokens":%d,"outputTokens":%d,"cachedReadTokens":40}}}}`, in, out, in, out)
	}
	path := h.write(filepath.Join("%2Fw%2Fproj", "g16", "updates.jsonl"),
		up("e1", `{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hi"},"_meta":{"modelId":"grok-4.5","promptIndex":0}}`)+up("e2", turn(100, 10)))
	h.start()
	h.waitMsgs(2)
	h.appendTo(path, up("e3", `{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"more"},"_meta":{"promptIndex":1}}`)+up("e4", turn(250, 30)))
	msgs := h.waitMsgs(4)
	var last *schema.Entry
	for i := range msgs {
		require.Equal(t, schema.FormatGrok, msgs[i].entry.Format)
		require.Equal(t, "g16", msgs[i].entry.SessionID)
		require.Equal(t, "/w/proj", msgs[i].entry.CWD)
		if msgs[i].entry.EntryID == "e4:grok-4.5-build" {
			last = &msgs[i].entry
		}
	}
	require.NotNil(t, last, "the appended turn")
	require.Equal(t, schema.Usage{Input: 210, Output: 30, CacheRead: 40}, *last.Usage)
	require.Equal(t, "grok-build:g16:e4:grok-4.5-build", last.UsageKey)
}

// A Qwen Code chat file is detected from its first record (Claude Code's
// envelope around a Gemini Content) and followed as it grows: the
// appended call is published with its disjoint usage.
func TestTailer_FollowsQwen(t *testing.T) {
	h := newHarness(t)
	rec := func(id, typ, rest string) string {
		return fmt.Sprintf(`{"uuid":%q,"parentUuid":null,"sessionId":"s16","timestamp":"2026-11-02T09:00:00.000Z","type":%q,"cwd":"/w","version":"0.19.2",%s}`+"\n", id, typ, rest)
	}
	path := h.write(filepath.Join("chats", "s16.jsonl"), rec("u1", "user", `"message":{"role":"user","parts":[{"text":"hi"}]}`))
	h.start()
	h.waitMsgs(1)
	h.appendTo(path, rec("a1", "assistant", `"model":"qwen3-coder-plus","message":{"role":"model","parts":[{"text":"ok"}]},"usageMetadata":{"promptTokenCount":1000,"candidatesTokenCount":20,"cachedContentTokenCount":600,"totalTokenCount":1020}`))
	msgs := h.waitMsgs(2)
	var call *schema.Entry
	for i := range msgs {
		require.Equal(t, schema.FormatQwen, msgs[i].entry.Format)
		if msgs[i].entry.EntryID == "a1" {
			call = &msgs[i].entry
		}
	}
	require.NotNil(t, call, "the appended call")
	require.Equal(t, schema.Usage{Input: 400, Output: 20, CacheRead: 600}, *call.Usage)
	require.Equal(t, "qwen-code:a1", call.UsageKey)
}

// A Kimi CLI wire log is detected from its header and followed as it
// grows; the session is the directory it is in.
func TestTailer_FollowsKimi(t *testing.T) {
	h := newHarness(t)
	rec := func(ts float64, typ, payload string) string {
		return fmt.Sprintf(`{"timestamp": %.3f, "message": {"type": %q, "payload": %s}}`+"\n", ts, typ, payload)
	}
	path := h.write(filepath.Join("sessions", "3f2a", "s17", "wire.jsonl"),
		`{"type": "metadata", "protocol_version": "1.3"}`+"\n"+rec(1778317200, "TurnBegin", `{"user_input": "hi"}`))
	h.start()
	h.waitMsgs(2)
	h.appendTo(path, rec(1778317201.5, "StatusUpdate", `{"token_usage": {"input_other": 400, "output": 20, "input_cache_read": 600, "input_cache_creation": 0}, "message_id": "chatcmpl-t"}`))
	msgs := h.waitMsgs(3)
	var call *schema.Entry
	for i := range msgs {
		require.Equal(t, schema.FormatKimi, msgs[i].entry.Format)
		require.Equal(t, "s17", msgs[i].entry.SessionID)
		if msgs[i].entry.Usage != nil {
			call = &msgs[i].entry
		}
	}
	require.NotNil(t, call, "the appended call")
	require.Equal(t, schema.Usage{Input: 400, Output: 20, CacheRead: 600}, *call.Usage)
	require.Equal(t, "kimi-cli:chatcmpl-t:400:20:600:0", call.UsageKey)
}

func TestTailer_NATSOutage(t *testing.T) {
	h := newHarness(t)
	path := h.write("s12.jsonl", piFile("s12", 0, 20))
	h.start()
	h.waitMsgs(21)
	h.srv.Stop()
	h.appendTo(path, piFile("s12", 21, 60))
	natstest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if s := h.pub.Stats(); s.Errors == 0 {
			return fmt.Errorf("no publish attempt failed yet (%+v)", s)
		}
		return nil
	})
	h.srv.Start(t)
	msgs := h.stays(61)
	require.Equal(t, wantIDs("s12", 0, 60), ids(t, msgs, "s12"))
}

func TestTailer_ManyFiles(t *testing.T) {
	t.Parallel() // a server and directories of its own
	n := 10000
	if testing.Short() {
		n = 1000
	}
	h := newHarness(t)
	for i := range n {
		h.write(filepath.Join("d"+string(rune('a'+i%26)), "f"+strconv.Itoa(i)+".jsonl"), piHeader("m"+strconv.Itoa(i)))
	}
	h.start(func(c *Config) { c.MaxOpenFiles = 64 })
	h.waitMsgs(n)
	require.LessOrEqual(t, h.tl.openHandles(), 64)
	requireHandles(t, h.tl)
	requireInflight(t, h.tl)
}

func TestTailer_UnchangedStates(t *testing.T) {
	saved := []FileState{
		{Dev: 1, Ino: 10, Path: "/a", Offset: 100, Format: schema.FormatPi},
		{Dev: 1, Ino: 11, Path: "/b", Offset: 200, Format: schema.FormatClaudeCode},
		{Dev: 2, Ino: 10, Path: "/c", Skipped: true},
	}
	tl := &Tailer{lastSaved: saved, savedAt: map[fileID]int{{Dev: 1, Ino: 10}: 0, {Dev: 1, Ino: 11}: 1, {Dev: 2, Ino: 10}: 2}}
	same := []FileState{saved[2], saved[0], saved[1]} // any order
	require.True(t, tl.unchanged(same))

	moved := slices.Clone(same)
	moved[1].Offset = 150
	require.False(t, tl.unchanged(moved), "an offset advanced")
	renamed := slices.Clone(same)
	renamed[0].Path = "/c.bak"
	require.False(t, tl.unchanged(renamed), "a file was renamed")
	require.False(t, tl.unchanged(same[:2]), "a file is gone")
	replaced := slices.Clone(same)
	replaced[2] = FileState{Dev: 3, Ino: 1, Path: "/b", Offset: 200, Format: schema.FormatClaudeCode}
	require.False(t, tl.unchanged(replaced), "a file was replaced by another inode")
}

// A message JetStream refuses for good (here: larger than the stream's
// max_msg_size) becomes a dead letter, and the file goes on: the lines
// after it are published and the checkpoint passes it.
func TestTailer_RejectedMessageBecomesDeadLetter(t *testing.T) {
	h := newHarness(t)
	ctx := t.Context()
	s, err := h.js.Stream(ctx, bus.DefaultStream)
	require.NoError(t, err)
	cfg := s.CachedInfo().Config
	cfg.MaxMsgSize = 8000 // room for a dead letter with its 4 KB head, not for the big entry
	_, err = h.js.UpdateStream(ctx, cfg)
	require.NoError(t, err)

	head := piHeader("s13") + piLine(1)
	path := h.write("s13.jsonl", head)
	h.start()
	h.stays(2)
	// Random text: the batch holding it does not compress below the
	// stream's limit, and is refused with the line after it.
	big := `{"type":"message","id":"big","parentId":null,"timestamp":"2026-01-01T00:00:30.000Z","message":{"role":"user","content":"` +
		randomText(12000) + `","timestamp":1767225600000}}` + "\n"
	h.appendTo(path, big+piLine(2))
	h.stays(3)
	h.appendTo(path, piLine(3))
	msgs := h.stays(4)
	require.Equal(t, []string{"s13", "e000001", "e000003"}, ids(t, msgs, "s13"))
	var dead []*bus.DeadLetter
	for _, g := range msgs {
		if g.dead != nil {
			dead = append(dead, g.dead)
		}
	}
	require.Len(t, dead, 1)
	require.Contains(t, dead[0].Error, "rejected")
	require.Contains(t, dead[0].Error, "batch message of 2 entries of lines 3+2", "the lines the refused batch held")
	require.Equal(t, path, dead[0].Path)
	require.Equal(t, int64(3), dead[0].Line, "located at the batch's first line")
	require.Equal(t, int64(len(head)), dead[0].Offset)
	require.Equal(t, int64(1), h.tl.Metrics().Snapshot().PublishErrors)

	h.stop()
	cp, err := OpenCheckpoints(h.state)
	require.NoError(t, err)
	states, err := cp.Load()
	require.NoError(t, err)
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Len(t, states, 1)
	require.Equal(t, info.Size(), states[0].Offset, "the checkpoint passed the refused line")
}

// Lines are handed to the publisher in bursts (publishBatch messages or
// publishBatchBytes bytes): a long file, with large lines among small
// ones, arrives whole and in order, and a restart sends only what is new.
func TestTailer_LongFileInBursts(t *testing.T) {
	h := newHarness(t)
	var b strings.Builder
	b.WriteString(piHeader("s14"))
	for i := 1; i <= 3*publishBatch+7; i++ {
		if i%50 == 0 { // ~200 KB entries: the byte bound ends some bursts early
			fmt.Fprintf(&b, `{"type":"message","id":"e%06d","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"%s","timestamp":1767225600000}}`+"\n", i, strings.Repeat("z", 200<<10))
			continue
		}
		b.WriteString(piLine(i))
	}
	n := 3*publishBatch + 7
	path := h.write("s14.jsonl", b.String())
	h.start()
	msgs := h.stays(n + 1)
	require.Equal(t, wantIDs("s14", 0, n), ids(t, msgs, "s14"))
	h.stop()

	h.appendTo(path, piFile("s14", n+1, n+10))
	h.start()
	msgs = h.stays(n + 11)
	require.Equal(t, wantIDs("s14", 0, n+10), ids(t, msgs, "s14"))
	require.Equal(t, int64(10), h.tl.Metrics().Snapshot().Entries)
}

// With Poll, the tailer adds no notification watch and finds new files,
// new directories and appends by its rescans alone.
func TestTailer_Poll(t *testing.T) {
	t.Run("rescans find everything", func(t *testing.T) {
		h := newHarness(t)
		path := h.write("a/s1.jsonl", piFile("s1", 0, 2))
		h.start(func(c *Config) { c.Poll = true })
		h.waitMsgs(3)
		h.appendTo(path, piLine(3))
		h.write("b/deep/s2.jsonl", piFile("s2", 0, 1))
		msgs := h.waitMsgs(6)
		require.Equal(t, wantIDs("s1", 0, 3), ids(t, msgs, "s1"))
		require.Equal(t, wantIDs("s2", 0, 1), ids(t, msgs, "s2"))
		require.Zero(t, h.tl.Metrics().Snapshot().WatchedDirs)
	})
	t.Run("nothing but rescans", func(t *testing.T) {
		// A rescan period longer than the test: an append after the
		// first scan stays unread, where a notification would have
		// had it published in milliseconds.
		h := newHarness(t)
		path := h.write("a/s1.jsonl", piFile("s1", 0, 2))
		h.start(func(c *Config) { c.Poll, c.RescanInterval = true, time.Hour })
		h.waitMsgs(3)
		h.appendTo(path, piLine(3))
		h.settle(false)
		require.Len(t, h.stream(), 3)
	})
	t.Run("same-size rewrite", func(t *testing.T) {
		// No notification says it; the modification time does.
		h := newHarness(t)
		path := h.write("a/s1.jsonl", piFile("s1", 0, 2))
		h.start(func(c *Config) { c.Poll, c.RescanInterval = true, 50*time.Millisecond })
		h.waitMsgs(3)
		next := piFile("s9", 0, 2)
		require.Len(t, next, len(piFile("s1", 0, 2)))
		require.NoError(t, os.WriteFile(path, []byte(next), 0o644))
		later := time.Now().Add(time.Second) // whatever the clock's resolution
		require.NoError(t, os.Chtimes(path, later, later))
		msgs := h.waitMsgs(6)
		require.Equal(t, wantIDs("s9", 0, 2), ids(t, msgs, "s9"))
	})
	t.Run("notifications by default", func(t *testing.T) {
		h := newHarness(t)
		path := h.write("a/s1.jsonl", piFile("s1", 0, 2))
		h.start(func(c *Config) { c.RescanInterval = time.Hour })
		h.waitMsgs(3)
		h.appendTo(path, piLine(3))
		h.waitMsgs(4)
		require.Positive(t, h.tl.Metrics().Snapshot().WatchedDirs)
	})
}

// A directory removed and made again, or renamed, is watched again: new
// lines are published by notification, not at the next rescan. The new
// file here usually gets the inode of the deleted one, with the same size,
// and must still be read as the new file it is.
func TestTailer_DirectoryMadeAgainIsWatched(t *testing.T) {
	h := newHarness(t)
	h.write("a/s1.jsonl", piFile("s1", 0, 1))
	h.start(func(c *Config) { c.RescanInterval = time.Hour }) // notifications only
	h.waitMsgs(2)
	watched := func() int64 { return h.tl.Metrics().Snapshot().WatchedDirs }
	require.Equal(t, int64(2), watched()) // the root and a

	// Removed and made again.
	require.NoError(t, os.RemoveAll(filepath.Join(h.dir, "a")))
	require.Eventually(t, func() bool { return watched() == 1 }, 10*time.Second, 10*time.Millisecond)
	path := h.write("a/s2.jsonl", piFile("s2", 0, 1))
	h.waitMsgs(4)
	require.Eventually(t, func() bool { return watched() == 2 }, 10*time.Second, 10*time.Millisecond)
	h.appendTo(path, piLine(2))
	h.waitMsgs(5)

	// Renamed: the new name is watched, the old one forgotten.
	require.NoError(t, os.Rename(filepath.Join(h.dir, "a"), filepath.Join(h.dir, "b")))
	path = filepath.Join(h.dir, "b", "s2.jsonl")
	require.Eventually(t, func() bool {
		h.tl.mu.Lock()
		defer h.tl.mu.Unlock()
		_, old := h.tl.watched[filepath.Join(h.dir, "a")]
		return !old && h.tl.watched[filepath.Join(h.dir, "b")]
	}, 10*time.Second, 10*time.Millisecond)
	h.appendTo(path, piLine(3))
	msgs := h.waitMsgs(6)
	require.Equal(t, wantIDs("s2", 0, 3), ids(t, msgs, "s2"))
	require.Equal(t, int64(2), watched())
}

// Secrets in what the transcripts hold are replaced before anything is
// published (redacted mode), or no text leaves at all (metadata mode).
func TestTailer_Redacts(t *testing.T) {
	const key = "AKIAQX7ZP3LM2RTY6WEB"
	line := func(i int) string {
		return fmt.Sprintf(`{"type":"message","id":"m%d","parentId":null,"timestamp":"2026-01-01T00:00:0%dZ","message":{"role":"user","content":"deploy with %s please","timestamp":1767225600000}}`, i, i, key) + "\n"
	}
	for _, mode := range []redact.Mode{redact.Redacted, redact.Metadata} {
		t.Run(mode.String(), func(t *testing.T) {
			h := newHarness(t)
			h.write("s.jsonl", piFile("s", 0, 0)+line(1))
			r, err := redact.New(redact.Config{Mode: mode})
			require.NoError(t, err)
			h.start(func(c *Config) { c.Redactor = r })
			msgs := h.waitMsgs(2)
			for _, m := range msgs {
				require.NotContains(t, string(m.entry.AppendJSON(nil)), key)
			}
			e := msgs[1].entry
			st := h.tl.Metrics().Redacted()
			if mode == redact.Redacted {
				require.Equal(t, "deploy with [REDACTED:aws-access-key] please", e.Text)
				require.Equal(t, int64(1), st.Count(redact.AWSAccessKey))
			} else {
				require.Empty(t, e.Text)
				require.Positive(t, st.Emptied)
			}
		})
	}
}
