package formats_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// A Decoder is fed the complete lines of one file, as a follower reads
// them. The first line tells no format, so it is held; the second
// decides, and both are handed out in order. End(false) leaves a growing
// file open; End(true) would decide an undecided static file.
func ExampleDecoder() {
	const file = `{"type":"permission-mode","permissionMode":"default"}
{"type":"user","uuid":"u1","sessionId":"s1","timestamp":"2026-03-01T08:00:00Z","message":{"role":"user","content":"hi"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s1","timestamp":"2026-03-01T08:00:02Z","message":{"id":"msg_1","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"hello"}],"usage":{"input_tokens":10,"output_tokens":3}},"requestId":"req_1"}
{"type":"user",`

	dec, err := formats.NewDecoder(formats.DecoderConfig{Config: parse.Config{Path: "s1.jsonl"}})
	if err != nil {
		panic(err)
	}
	show := func(r *formats.Result) error {
		for _, e := range r.Entries {
			fmt.Printf("line %d (ends at %d): %s %s [%s]\n", r.Line.Number, r.Line.End, e.Format, e.Kind, e.Role)
		}
		return nil
	}
	rd := jsonl.NewReader(strings.NewReader(file), jsonl.ReaderConfig{})
	for {
		line, err := rd.Next()
		if err != nil {
			break // io.EOF: the half-written last line stays in the reader
		}
		if err := dec.Decode(line, show); err != nil {
			panic(err)
		}
		fmt.Printf("after line %d: format %q, %d held\n", line.Number, dec.Format(), dec.Held())
	}
	if err := dec.End(false, show); err != nil {
		panic(err)
	}
	fmt.Printf("pending: %d bytes\n", len(rd.Buffered()))
	// Output:
	// after line 1: format "", 1 held
	// line 1 (ends at 54): claude-code event []
	// line 2 (ends at 175): claude-code message [user]
	// after line 2: format "claude-code", 0 held
	// line 3 (ends at 459): claude-code message [assistant]
	// after line 3: format "claude-code", 0 held
	// pending: 15 bytes
}

// ReadFile reads a static file whole through a Decoder.
func ExampleRead() {
	const file = `{"timestamp":"2026-02-23T11:40:29.275Z","type":"session_meta","payload":{"id":"019c","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.104.0"}}
{"timestamp":"2026-02-23T11:40:30.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}
{"timestamp":"2026-02-23T11:40:31.000Z","type":"respo`
	st, err := formats.Read(context.Background(), strings.NewReader(file), formats.ReadConfig{Config: parse.Config{Path: "rollout.jsonl"}},
		func(e *schema.Entry) { fmt.Printf("%s [%s] %s\n", e.Kind, e.Role, e.SessionID) },
		func(err error) { fmt.Println("bad line:", err) })
	fmt.Println(st.Format, st.Lines, "lines,", st.Entries, "entries,", st.Pending, "bytes pending; err:", err)
	// Output:
	// session [] 019c
	// message [user] 019c
	// codex 2 lines, 2 entries, 53 bytes pending; err: <nil>
}

// A FileReader reads every transcript under the paths given (files,
// directories, globs) in parallel and hands the entries to one consumer.
func ExampleFileReader() {
	dir, err := os.MkdirTemp("", "transcripts")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	files := map[string]string{
		"claude/s1.jsonl": `{"type":"user","uuid":"u1","sessionId":"s1","timestamp":"2026-03-01T08:00:00Z","message":{"role":"user","content":"hi"}}` + "\n",
		"codex/r.jsonl":   `{"timestamp":"2026-02-23T11:40:29.275Z","type":"session_meta","payload":{"id":"019c","cwd":"/w"}}` + "\n{\"timestamp\":",
		"notes.jsonl":     `{"key":"k","content":"fact"}` + "\n",
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			panic(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			panic(err)
		}
	}

	fr, err := formats.NewFileReader(formats.FileReaderConfig{
		Workers:     2,
		OnLineError: func(err error) { fmt.Println("bad line:", err) },
	})
	if err != nil {
		panic(err)
	}
	sessions := map[string]int{}
	err = fr.Read(context.Background(), []string{dir}, func(entries []schema.Entry) {
		for _, e := range entries {
			sessions[string(e.Format)+" "+e.SessionID]++
		}
	})
	st := fr.Stats()
	fmt.Println(sessions, err)
	fmt.Printf("%d files read, %d not transcripts, %d incomplete last lines\n", st.Files, st.Skipped, st.Pending)
	// Output:
	// map[claude-code s1:1 codex 019c:1] <nil>
	// 2 files read, 1 not transcripts, 1 incomplete last lines
}
