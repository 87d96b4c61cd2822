package bus_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/schema"
)

func ExampleToken() {
	fmt.Println(bus.Token("build-01"))
	fmt.Println(bus.Token("my.host.example"))
	fmt.Println(bus.Token(""))
	// Output:
	// build-01
	// my%2Ehost%2Eexample
	// _
}

func ExampleEntrySubject() {
	fmt.Println(bus.EntrySubject(bus.DefaultPrefix, "laptop.local", string(schema.FormatCodex)))
	fmt.Println(bus.DeadSubject(bus.DefaultPrefix, "laptop.local"))
	// Output:
	// sessionpipe.entries.laptop%2Elocal.codex
	// sessionpipe.dead.laptop%2Elocal
}

// Laptop mode end to end: an embedded server, the stream, a publisher,
// and an entry read back.
func ExamplePublisher() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir, err := os.MkdirTemp("", "sessionpipe-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	srv, err := bus.StartEmbedded(ctx, bus.EmbeddedConfig{StoreDir: dir})
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
	p, err := bus.NewPublisher(js, bus.PublisherConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}

	e := &schema.Entry{Format: schema.FormatClaudeCode, Host: "laptop", SessionID: "s1", EntryID: "u1",
		Kind: schema.KindMessage, Role: schema.RoleUser, Text: "hello"}
	err = p.Publish(ctx, bus.EntryMsg(bus.DefaultPrefix, e, nil), func(err error) {
		fmt.Println("acknowledged:", err == nil) // the tailer advances its checkpoint here
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := p.Close(ctx); err != nil {
		fmt.Println(err)
		return
	}

	st, err := js.Stream(ctx, bus.DefaultStream)
	if err != nil {
		fmt.Println(err)
		return
	}
	raw, err := st.GetMsg(ctx, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	var got schema.Entry
	if err := bus.DecodeEntry(raw.Header, raw.Data, &got); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(raw.Subject, got.Key(), got.Text)
	// Output:
	// acknowledged: true
	// sessionpipe.entries.laptop.claude-code claude-code:laptop:s1:u1 hello
}

func ExampleDeadMsg() {
	msg := bus.DeadMsg(bus.DefaultPrefix, &bus.DeadLetter{
		Host: "laptop", Path: "/s.jsonl", Line: 3, Offset: 812, Error: "invalid JSON", Head: []byte(`{"type":`),
	})
	fmt.Println(msg.Subject)
	fmt.Println(msg.Header.Get(bus.HeaderMsgID))
	fmt.Println(string(msg.Data))
	// Output:
	// sessionpipe.dead.laptop
	// dead:laptop:/s.jsonl:812
	// {"host":"laptop","path":"/s.jsonl","line":3,"offset":812,"error":"invalid JSON","head":"eyJ0eXBlIjo="}
}
