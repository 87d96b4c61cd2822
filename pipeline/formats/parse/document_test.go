package parse_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
)

// Fields and Elements locate each value in the document: its bytes, its
// offset and its line, strings with their quotes.
func TestFields_Elements(t *testing.T) {
	doc := []byte("{\n  \"id\": \"T-1\",\n  \"messages\": [\n    {\"a\": 1},\n    \"x\", 2\n  ],\n  \"id\": \"T-2\"\n}\n")
	f, err := parse.Fields(doc)
	require.NoError(t, err)
	require.Equal(t, `"T-2"`, string(f["id"].Raw), "the last of a repeated field")
	require.Equal(t, int64(7), f["id"].Line)
	m := f["messages"]
	require.Equal(t, int64(3), m.Line)
	els, err := parse.Elements(doc, m)
	require.NoError(t, err)
	require.Len(t, els, 3)
	require.Equal(t, `{"a": 1}`, string(els[0].Raw))
	require.Equal(t, int64(4), els[0].Line)
	require.Equal(t, string(doc[els[0].Offset:els[0].Offset+int64(len(els[0].Raw))]), string(els[0].Raw))
	require.Equal(t, `"x"`, string(els[1].Raw))
	require.Equal(t, [2]int64{5, 5}, [2]int64{els[1].Line, els[2].Line})

	_, err = parse.Elements(doc, f["id"])
	require.ErrorIs(t, err, parse.ErrNotArray)
}

func TestFields_Errors(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want error
		at   int
	}{
		{`[1]`, parse.ErrNotObject, -1},
		{``, parse.ErrNotObject, -1},
		{`{"a":1} {}`, jsonl.ErrSyntax, 8},
		{`{"a":[1,}`, jsonl.ErrSyntax, -1},
		{`{"a":1`, jsonl.ErrUnexpectedEnd, -1},
	} {
		_, err := parse.Fields([]byte(tc.doc))
		require.ErrorIs(t, err, tc.want, "Fields(%q)", tc.doc)
		var se *jsonl.SyntaxError
		if tc.at >= 0 && errors.As(err, &se) {
			require.Equal(t, tc.at, se.Offset, "Fields(%q)", tc.doc)
		}
	}
	// An error inside an array is located in the document.
	doc := []byte(`{"m": [1, 2, }`)
	_, err := parse.Fields(doc)
	var se *jsonl.SyntaxError
	require.ErrorAs(t, err, &se)
}
