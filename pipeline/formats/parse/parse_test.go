package parse_test

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

func TestConfig_Log(t *testing.T) {
	t.Run("NilDiscards", func(t *testing.T) {
		log := parse.Config{}.Log()
		require.NotNil(t, log)
		require.False(t, log.Enabled(t.Context(), slog.LevelError))
	})
	t.Run("Given", func(t *testing.T) {
		var buf bytes.Buffer
		h := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})
		parse.Config{Logger: slog.New(h)}.Log().With("component", "pi").Debug("unknown entry type")
		require.Contains(t, buf.String(), `msg="unknown entry type" component=pi`)
	})
}

func TestUniqueIDs_ID(t *testing.T) {
	var u parse.UniqueIDs
	require.True(t, u.Empty())
	tests := []struct {
		name   string
		id     string
		line   int64
		object int
		want   string
	}{
		{"OwnID", "abc", 1, 0, "abc"},
		{"NoID", "", 2, 0, "L2"},
		{"NoIDSecondObject", "", 2, 1, "L2.1"},
		{"RepeatedID", "abc", 3, 0, "abc.L3"},
		{"RepeatedIDSecondObject", "abc", 3, 1, "abc.L3.1"},
		{"IDTakenByLineID", "L2", 4, 0, "L2.L4"},
	}
	for _, tt := range tests {
		got := u.ID(tt.id, tt.line, tt.object)
		require.Equal(t, tt.want, got, "%s: ID(%q, %d, %d)", tt.name, tt.id, tt.line, tt.object)
	}
	require.False(t, u.Empty())
}

func TestRawJSON(t *testing.T) {
	var s jsonl.Scanner
	s.Reset([]byte(`{"str":"a\"b","null":null,"arr":[1, {"x":2}],"num":-3.5e2,"obj":{"k":true}}`))
	require.True(t, s.EnterObject())
	got := map[string]string{}
	for s.NextField() {
		b := parse.RawJSON(s.Value())
		if b == nil {
			got[string(s.Key())] = "<nil>"
			continue
		}
		got[string(s.Key())] = string(b)
	}
	require.NoError(t, s.Err())
	require.Equal(t, map[string]string{
		"str":  `"a\"b"`,
		"null": "<nil>",
		"arr":  `[1, {"x":2}]`,
		"num":  "-3.5e2",
		"obj":  `{"k":true}`,
	}, got)
	require.Nil(t, parse.RawJSON(jsonl.Value{}), "no value")
}

func TestLineID(t *testing.T) {
	require.Equal(t, "L7", parse.LineID(7, 0))
	require.Equal(t, "L7.2", parse.LineID(7, 2))
}

func TestContentIDs_ID(t *testing.T) {
	var c parse.ContentIDs
	a := c.ID([]byte(`{"a":1}`))
	require.Regexp(t, `^h[0-9a-f]+$`, a)
	require.Equal(t, a+".1", c.ID([]byte(`{"a":1}`)), "a repeat")
	require.Equal(t, a+".2", c.ID([]byte(`{"a":1}`)), "a second repeat")
	require.NotEqual(t, a, c.ID([]byte(`{"a":2}`)))
}

func TestOptString(t *testing.T) {
	var s jsonl.Scanner
	s.Reset([]byte(`{"str":"a","null":null,"num":1,"obj":{}}`))
	require.True(t, s.EnterObject())
	type result struct {
		Text string
		OK   bool
	}
	got := map[string]result{}
	for s.NextField() {
		v, ok := parse.OptString(s.Value())
		got[string(s.Key())] = result{parse.Str(v), ok}
	}
	require.Equal(t, map[string]result{
		"str":  {"a", true},
		"null": {"", true},
		"num":  {"", false},
		"obj":  {"", false},
	}, got)
	v, ok := parse.OptString(jsonl.Value{})
	require.True(t, ok, "absent")
	require.Equal(t, jsonl.Invalid, v.Kind())
}

// A number of Unix milliseconds outside the years 0 to 9999 is no time:
// RFC 3339, the entry's JSON form, cannot write it, so the stream's
// consumers would refuse the entry that offline counting kept.
func TestTime_Range(t *testing.T) {
	var s jsonl.Scanner
	s.Reset([]byte(`{"ok":1767225600000,"y9999":253402300799999,"y10000":253402300800000,"neg":-62167219200000,"before0":-62167219200001,"str":"9999-12-31T23:59:59Z"}`))
	require.True(t, s.EnterObject())
	got := map[string]bool{}
	for s.NextField() {
		_, ok := parse.Time(s.Value())
		got[string(s.Key())] = ok
	}
	require.NoError(t, s.Err())
	require.Equal(t, map[string]bool{"ok": true, "y9999": true, "y10000": false, "neg": true, "before0": false, "str": true}, got)
}
