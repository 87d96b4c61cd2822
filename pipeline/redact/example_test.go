package redact_test

import (
	"encoding/json"
	"fmt"

	"github.com/sessionpipe/sessionpipe/pipeline/redact"
	"github.com/sessionpipe/sessionpipe/schema"
)

func Example() {
	r, err := redact.New(redact.Config{}) // Mode: Redacted
	if err != nil {
		panic(err)
	}
	var st redact.Stats
	fmt.Println(r.String("git remote add o https://x:ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123@github.com/o/r", &st))
	fmt.Println(r.String("DATABASE_URL=postgres://app:s3cr3t-pw@db:5432/app", &st))
	fmt.Println(string(r.JSON([]byte(`{"command":"curl -H 'Authorization: Bearer tok_8f2a9c1e7b3d4f6a'","password":"hunter2"}`), &st)))
	fmt.Println(st.Total(), "secrets:", st.Count(redact.GitHubToken), "github,", st.Count(redact.URLPassword), "url,",
		st.Count(redact.BearerToken), "bearer,", st.Count(redact.Password), "password")
	// Output:
	// git remote add o https://x:[REDACTED:github-token]@github.com/o/r
	// DATABASE_URL=postgres://app:[REDACTED:url-password]@db:5432/app
	// {"command":"curl -H 'Authorization: Bearer [REDACTED:bearer-token]'","password":"[REDACTED:password]"}
	// 4 secrets: 1 github, 1 url, 1 bearer, 1 password
}

// In Metadata mode an entry keeps its numbers and names, and no text.
func ExampleRedactor_Entry() {
	r, err := redact.New(redact.Config{Mode: redact.Metadata})
	if err != nil {
		panic(err)
	}
	e := &schema.Entry{
		SessionID: "s1", Model: "claude-opus-4-6", Usage: &schema.Usage{Input: 3, Output: 120},
		Text:      "here is the key: AKIAABCDEFGHIJKLMNOP",
		ToolCalls: []schema.ToolCall{{ID: "t1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}},
	}
	st := r.Entry(e)
	fmt.Printf("%q %s %s %d %q %s emptied=%d\n", e.Text, e.Model, e.ToolCalls[0].Name, e.Usage.Output, e.ToolCalls[0].Input, e.SessionID, st.Emptied)
	// Output:
	// "" claude-opus-4-6 Bash 120 "" s1 emptied=2
}

func ExampleParseMode() {
	m, err := redact.ParseMode("metadata")
	fmt.Println(m, err)
	_, err = redact.ParseMode("everything")
	fmt.Println(err)
	// Output:
	// metadata <nil>
	// redact: unknown content mode "everything" (want full, redacted or metadata)
}
