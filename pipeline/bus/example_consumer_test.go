package bus_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/schema"
)

// An indexer's loop: check that the saved state belongs to this stream,
// hold the lease, consume from the sequence after the last one applied,
// apply each batch and record its last sequence before returning nil.
func ExampleConsumer() {
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
	for i, text := range []string{"hello", "world", "again"} {
		e := &schema.Entry{Format: schema.FormatClaudeCode, Host: "laptop", SessionID: "s1",
			EntryID: fmt.Sprint("u", i), Kind: schema.KindMessage, Role: schema.RoleUser, Text: text}
		if _, err := js.PublishMsg(ctx, bus.EntryMsg(bus.DefaultPrefix, e, nil)); err != nil {
			fmt.Println(err)
			return
		}
	}

	// The state the indexer saved: the stream it came from and the last
	// sequence applied. Here, nothing yet.
	var state struct {
		Stream  bus.StreamIdentity
		Applied uint64
	}
	id, err := bus.CheckIdentity(ctx, js, state.Stream)
	if errors.Is(err, bus.ErrStreamMismatch) {
		state.Applied = 0 // another stream: rebuild from scratch
	} else if err != nil {
		fmt.Println(err)
		return
	}
	state.Stream = id

	lease, err := bus.NewLease(js, bus.LeaseConfig{Role: "indexer", TTL: 5 * time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	held, err := lease.Acquire(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lease.Release(context.WithoutCancel(ctx))

	c, err := bus.NewConsumer(js, bus.ConsumerConfig{Name: "indexer", StartSeq: state.Applied + 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	run, stop := context.WithCancel(held) // ends if the lease is lost
	err = c.Run(run, func(ctx context.Context, b *bus.Batch) error {
		if b.Gap != nil {
			fmt.Println("lost:", b.Gap)
		}
		for _, d := range b.Entries {
			fmt.Println(d.Seq, d.Entry.Text) // apply, idempotently by entry key
		}
		state.Applied = b.Last // saved with the aggregates
		if state.Applied == 3 {
			stop()
		}
		return nil
	})
	fmt.Println("stopped:", errors.Is(err, context.Canceled), "applied up to", state.Applied)
	// Output:
	// 1 hello
	// 2 world
	// 3 again
	// stopped: true applied up to 3
}
