package parquet_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/schema"
)

// A consumer's handler writes each entry with its stream sequence, and
// acknowledges up to Committed after each batch; a ticker calls CommitDue;
// on SIGTERM, Close commits what is open.
func ExampleWriter() {
	dir, err := os.MkdirTemp("", "export-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	w, err := parquet.NewWriter(parquet.Config{Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	ts := time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC)
	batch := []schema.Entry{
		{Format: schema.FormatClaudeCode, Host: "laptop", SessionID: "s1", EntryID: "u1", TS: ts, Kind: schema.KindMessage, Role: schema.RoleUser, Text: "hi"},
		{Format: schema.FormatCodex, Host: "ci/runner-7", SessionID: "s2", EntryID: "r1", TS: ts, Kind: schema.KindSession},
		{Format: schema.FormatClaudeCode, Host: "laptop", SessionID: "s1", EntryID: "a1", TS: ts.Add(time.Second), Kind: schema.KindMessage, Role: schema.RoleAssistant},
	}
	for i := range batch {
		if err := w.Write(ctx, &batch[i], uint64(101+i)); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("ack up to", w.Committed()) // nothing committed yet

	if err := w.CommitDue(ctx, time.Now().Add(parquet.DefaultPartAge)); err != nil {
		log.Fatal(err)
	}
	fmt.Println("ack up to", w.Committed())
	for _, f := range w.Manifest() {
		fmt.Println(f.Path, f.Rows)
	}
	if err := w.Close(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// ack up to 100
	// ack up to 103
	// format=claude-code/date=2026-05-01/host=laptop/part-101-103.parquet 2
	// format=codex/date=2026-05-01/host=ci%2Frunner-7/part-102-102.parquet 1
}

func ExampleEscapeValue() {
	for _, v := range []string{"laptop", "../../etc", "a=b", "", "NULL"} {
		fmt.Printf("%q -> %s\n", v, parquet.EscapeValue(v))
	}
	// Output:
	// "laptop" -> laptop
	// "../../etc" -> ..%2F..%2Fetc
	// "a=b" -> a%3Db
	// "" -> NULL
	// "NULL" -> %4EULL
}
