package tail_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/tail"
)

// A tailer following a directory of transcripts into an embedded
// JetStream server, until it has caught up.
func ExampleTailer() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir, err := os.MkdirTemp("", "sessionpipe-tail-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	transcripts := filepath.Join(dir, "sessions")
	if err := os.MkdirAll(transcripts, 0o755); err != nil {
		fmt.Println(err)
		return
	}
	// A pi transcript: a session header and one user message.
	err = os.WriteFile(filepath.Join(transcripts, "s1.jsonl"), []byte(
		`{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`+"\n"+
			`{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1767225601000}}`+"\n",
	), 0o644)
	if err != nil {
		fmt.Println(err)
		return
	}

	srv, err := bus.StartEmbedded(ctx, bus.EmbeddedConfig{StoreDir: filepath.Join(dir, "store")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Shutdown(ctx)
	js, err := jetstream.New(srv.Conn())
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := bus.EnsureStream(ctx, js, bus.StreamConfig{}); err != nil {
		fmt.Println(err)
		return
	}
	pub, err := bus.NewPublisher(js, bus.PublisherConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pub.Close(ctx)

	tl, err := tail.New(tail.Config{
		Watch:     []string{transcripts}, // a directory: every transcript under it
		StateDir:  filepath.Join(dir, "state"),
		Host:      "laptop",
		Publisher: pub,
		Text:      true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- tl.Run(runCtx) }()
	for !tl.Idle() {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		fmt.Println(err)
		return
	}
	s := tl.Metrics().Snapshot()
	fmt.Printf("files %d, lines %d, entries published %d\n", s.Files, s.Lines, s.AckedEntries)
	// Output:
	// files 1, lines 2, entries published 2
}

// What a tailer would follow under a directory and a glob, before
// running one.
func ExampleSurveyWatches() {
	dir, err := os.MkdirTemp("", "sessionpipe-survey-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	for _, name := range []string{"a/s1.jsonl", "a/b/s2.jsonl", "a/notes.txt"} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			fmt.Println(err)
			return
		}
		if err := os.WriteFile(path, []byte("{}\n"), 0o644); err != nil {
			fmt.Println(err)
			return
		}
	}
	sv, err := tail.SurveyWatches([]string{filepath.Join(dir, "a"), filepath.Join(dir, "later", "**", "*.jsonl")})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range sv.Watches {
		fmt.Printf("%s: %d files, waits %t\n", filepath.Base(w.Dir), len(w.Files), w.Waits)
	}
	fmt.Println("directories to watch:", sv.Dirs)
	// Output:
	// a: 2 files, waits true
	// later: 0 files, waits false
	// directories to watch: 2
}
