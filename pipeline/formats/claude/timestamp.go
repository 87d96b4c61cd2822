package claude

import (
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// timestamp decodes a timestamp value like [parse.Time], with a fast path
// for the form Claude Code writes, "2026-02-11T20:36:47.925Z" (UTC, any
// number of fraction digits), which is on every line.
func timestamp(v jsonl.Value) (time.Time, bool) {
	if v.Kind() == jsonl.String && !v.Escaped() {
		if t, ok := schema.ParseUTC(v.Raw()); ok {
			return t, true
		}
	}
	return parse.Time(v)
}
