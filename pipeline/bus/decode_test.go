package bus_test

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/testcorpus"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/formats"
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/schema"
)

// corpusJSON returns the canonical JSON of every entry of testdata and of
// a generated tree (raw lines kept, to have every field; every other
// entry labelled as a tailer's -label flags label them).
func corpusJSON(tb testing.TB) [][]byte {
	tb.Helper()
	found, err := formats.Walk([]string{"../../testdata/corpus", testcorpus.Generate(tb, 1<<20, 3)}, func(err error) { tb.Fatal(err) })
	require.NoError(tb, err)
	var out [][]byte
	for _, f := range found {
		if f.Meta {
			continue
		}
		_, err := formats.ReadFile(context.Background(), f.Path, formats.ReadConfig{Config: parse.Config{Host: "h", Text: true, Raw: true}},
			func(e *schema.Entry) {
				if len(out)%2 == 0 {
					e.Labels = map[string]string{"team": "infra", "cost_centre": "42", "zone": "eu \"west\" é"}
				}
				out = append(out, e.AppendJSON(nil))
			}, func(error) {})
		if err != nil && !errors.Is(err, formats.ErrUnknownFormat) {
			require.NoError(tb, err)
		}
	}
	require.NotEmpty(tb, out)
	return out
}

// The fast decoder gives exactly what schema.UnmarshalEntry gives.
func TestEntryDecoder_SameAsUnmarshalEntry(t *testing.T) {
	cases := corpusJSON(t)
	cases = append(cases,
		[]byte(`{"format":"pi","session_id":"s","entry_id":"e","kind":"message","unknown":{"a":[1,2,{"b":null}]},"text":"a\u00e9\ud83d\ude00\"\\/\n\t"}`),
		[]byte("{\"format\":\"pi\",\"session_id\":\"s\",\"entry_id\":\"e\",\"kind\":\"message\",\"text\":\"bad \xff\xfe utf8\"}"),
		[]byte(`{"format":"pi","session_id":"s","entry_id":"e","kind":"message","host":"h\u0000","tool_calls":[],"tool_results":null}`),
		[]byte(`{"format":null,"usage":null,"cost_usd":null,"ts":null,"tool_calls":[{"id":"1","name":"Bash","input":"str"},{"id":"2","input":null},null]}`),
		[]byte(`{"kind":"a","kind":"b","usage":{"input":1,"input":2,"speed":"fast","extra":true},"reaction":{"message_id":"m","emojis":[]}}`),
		[]byte(` {"ts":"2026-01-02T03:04:05.123456789+02:00","cost_usd":1e-7,"origin":{"provider":"x","label":"y"},"attachments":[{"size":"1KB"}]} `),
		[]byte(`{"raw":{"x":[1,"\u00e9"]},"tool_calls_omitted":3,"tool_results_omitted":0,"object":2,"offset":-1}`),
		[]byte(`{"labels":{}}`),
		[]byte(`{"labels":null,"host":"h"}`),
		[]byte(`{"labels":{"a":null,"b":"1","b":"2","T\u00e9am":"x\ny","":""}}`),
		[]byte(`{"labels":{"a":"x"},"Labels":{"b":"y"}}`),
		[]byte(`{"labels":{"a":"x"},"labels":null}`),
		[]byte("{\"labels\":{\"k\xff\":\"v\xfe\"}}"),
	)
	var d bus.EntryDecoder
	for i, data := range cases {
		var want, got schema.Entry
		werr := schema.UnmarshalEntry(data, &want)
		gerr := d.Decode(data, &got)
		require.Equal(t, werr == nil, gerr == nil, "case %d: %s\nwant err %v\ngot err %v", i, data, werr, gerr)
		if werr != nil {
			require.Equal(t, schema.Entry{}, got, "case %d: an error leaves a zero entry", i)
			continue
		}
		require.Equal(t, want, got, "case %d: %s", i, data)
	}
}

// Bad input is an error, located by field, never a panic, and leaves a
// zero entry.
func TestEntryDecoder_BadInput(t *testing.T) {
	var d bus.EntryDecoder
	for _, data := range []string{
		``, `[]`, `"x"`, `{`, `{"line":"12"}`, `{"line":1.5}`, `{"meta":"yes"}`, `{"ts":"yesterday"}`, `{"ts":12}`,
		`{"usage":{"input":"1"}}`, `{"tool_calls":{}}`, `{"tool_calls":[1]}`, `{"origin":"x"}`, `{"format":"a"} {"format":"b"}`,
		`{"text":"unterminated}`, `{"cost_usd":"1"}`, `{"labels":[]}`, `{"labels":"team=infra"}`, `{"labels":{"a":1}}`,
		`{"labels":{"a":"x",}}`,
	} {
		var e schema.Entry
		e.Host = "stale"
		err := d.Decode([]byte(data), &e)
		require.Error(t, err, "%s", data)
		require.Equal(t, schema.Entry{}, e, "%s", data)
		var want schema.Entry
		require.Error(t, schema.UnmarshalEntry([]byte(data), &want), "encoding/json-compatible decoding rejects %s too", data)
	}
	var e schema.Entry
	err := d.Decode([]byte(`{"line":"12"}`), &e)
	require.ErrorContains(t, err, `field "line"`)
}

func FuzzEntryDecoder(f *testing.F) {
	for _, data := range corpusJSON(f)[:200] {
		f.Add(data)
	}
	f.Add([]byte(`{"tool_calls":[{"input":{"a":"\u00e9"}}],"usage":{"input":1}}`))
	var d bus.EntryDecoder
	f.Fuzz(func(t *testing.T, data []byte) {
		var want, got schema.Entry
		werr := schema.UnmarshalEntry(data, &want)
		gerr := d.Decode(data, &got)
		if werr == nil && gerr == nil {
			require.Equal(t, want, got, "%q", data)
		}
		if gerr != nil {
			require.Equal(t, schema.Entry{}, got)
		}
	})
}

func BenchmarkEntryDecode(b *testing.B) {
	cases := corpusJSON(b)
	var n int
	for _, c := range cases {
		n += len(c)
	}
	b.Run("impl=segmentio", func(b *testing.B) {
		b.SetBytes(int64(n))
		b.ReportAllocs()
		var e schema.Entry
		for b.Loop() {
			for _, c := range cases {
				if err := schema.UnmarshalEntry(c, &e); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(len(cases))*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	})
	b.Run("impl=sessionpipe", func(b *testing.B) {
		b.SetBytes(int64(n))
		b.ReportAllocs()
		var d bus.EntryDecoder
		var e schema.Entry
		cpu0 := cpuTime(b)
		for b.Loop() {
			for _, c := range cases {
				if err := d.Decode(c, &e); err != nil {
					b.Fatal(err)
				}
			}
		}
		reportCPU(b, cpu0, n)
		b.ReportMetric(float64(len(cases))*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	})
}

// A Lite decoder gives the full entry but for tool inputs, tool result
// contents and the raw record, and a text cut on a character boundary.
func TestEntryDecoder_Lite(t *testing.T) {
	cases := corpusJSON(t)
	long := `{"format":"pi","session_id":"s","entry_id":"e","kind":"message","text":"` + strings.Repeat("é", bus.LiteTextBytes) + `"}`
	cases = append(cases, []byte(long))
	var full, lite bus.EntryDecoder
	lite.Lite = true
	cut := 0
	for i, data := range cases {
		var want, got schema.Entry
		require.NoError(t, full.Decode(data, &want))
		require.NoError(t, lite.Decode(data, &got))
		for j := range want.ToolCalls {
			want.ToolCalls[j].Input = nil
		}
		for j := range want.ToolResults {
			want.ToolResults[j].Content = ""
		}
		want.Raw = nil
		if len(want.Text) > bus.LiteTextBytes {
			cut++
			require.True(t, strings.HasPrefix(want.Text, got.Text), "case %d", i)
			require.LessOrEqual(t, len(got.Text), bus.LiteTextBytes)
			require.Greater(t, len(got.Text), bus.LiteTextBytes-4)
			require.True(t, utf8.ValidString(got.Text), "case %d: cut on a character boundary", i)
			want.Text = got.Text
		}
		require.Equal(t, want, got, "case %d", i)
	}
	require.Positive(t, cut)
}

// Field names that differ in case only match, as encoding/json matches
// them, at every level.
func TestEntryDecoder_FieldNamesIgnoreCase(t *testing.T) {
	var d bus.EntryDecoder
	upper := regexp.MustCompile(`"([a-z_0-9]+)":`)
	for i, data := range corpusJSON(t) {
		shouted := upper.ReplaceAllFunc(data, func(b []byte) []byte { return bytes.ToUpper(b) })
		var want, got schema.Entry
		require.NoError(t, schema.UnmarshalEntry(shouted, &want), "case %d", i)
		require.NoError(t, d.Decode(shouted, &got), "case %d", i)
		require.Equal(t, want, got, "case %d: %s", i, shouted)
	}
}
