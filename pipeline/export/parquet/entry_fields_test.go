package parquet_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/entrytest"
	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/export/parquet"
	"github.com/sessionpipe/sessionpipe/pipeline/redact"
	"github.com/sessionpipe/sessionpipe/schema"
)

// The round trip of the field table (schema.Fields): an entry with every
// field set, found by reflection (entrytest.Filled), through every form
// of the entry, each field checked as the table says. A field added to
// schema.Entry fails here until the table describes it
// (entrytest.Field) and every form carries it. The Parquet row's packed
// form is checked in entry_fields_internal_test.go.

// requireSameLeaves requires got to hold every field of want as it was,
// naming the form.
func requireSameLeaves(t *testing.T, form string, want, got *schema.Entry) {
	t.Helper()
	table := entrytest.ByGo()
	w, g := entrytest.Leaves(want), entrytest.Leaves(got)
	for path, v := range w {
		entrytest.Field(t, table, path)
		require.Equal(t, v, g[path], "%s: entry field %s", form, path)
	}
	require.Len(t, g, len(w), "%s: fields", form)
}

// TestEntryFieldTable_JSON: AppendJSON read back by encoding/json
// (UnmarshalEntry) and by the fast bus.EntryDecoder, with the names as
// written and in upper case (matched as encoding/json matches them).
func TestEntryFieldTable_JSON(t *testing.T) {
	e := entrytest.Filled(t, "")
	data := e.AppendJSON(nil)
	upper := upperKeys(t, data)
	for _, c := range []struct {
		name string
		data []byte
	}{{"canonical", data}, {"upper-case names", upper}} {
		t.Run(c.name, func(t *testing.T) {
			var std schema.Entry
			require.NoError(t, schema.UnmarshalEntry(c.data, &std))
			requireSameLeaves(t, "schema.UnmarshalEntry", &e, &std)
			var fast schema.Entry
			var d bus.EntryDecoder
			require.NoError(t, d.Decode(c.data, &fast))
			requireSameLeaves(t, "bus.EntryDecoder", &e, &fast)
		})
	}
}

// upperKeys returns the entry JSON data with the names of its fields,
// at every depth, in upper case (the labels' keys and the raw JSON
// documents are data, and kept).
func upperKeys(t *testing.T, data []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	require.NoError(t, d.Decode(&v))
	table := map[string]schema.Field{}
	for _, f := range schema.Fields() {
		table[f.JSON] = f
	}
	var up func(v any, path string) any
	up = func(v any, path string) any {
		if f, ok := table[path]; ok && (f.Type == schema.TypeJSON || f.Type == schema.TypeLabels) {
			return v
		}
		switch v := v.(type) {
		case map[string]any:
			m := map[string]any{}
			for k, x := range v {
				m[strings.ToUpper(k)] = up(x, strings.TrimPrefix(path+"."+k, "."))
			}
			return m
		case []any:
			for i := range v {
				v[i] = up(v[i], path)
			}
		}
		return v
	}
	out, err := json.Marshal(up(v, ""))
	require.NoError(t, err)
	require.NotContains(t, string(out), `"format"`)
	return out
}

// TestEntryFieldTable_Batch: the entry in a batch message (bus.BatchMsg)
// read back by the consumers' bus.BatchDecoder and bus.EntryDecoder.
func TestEntryFieldTable_Batch(t *testing.T) {
	e := entrytest.Filled(t, "")
	jsonl := append(e.AppendJSON(nil), '\n')
	span := bus.BatchSpan{Host: e.Host, Format: string(e.Format), File: "1:2", Offset: e.Offset, End: e.Offset + 10, Line: e.Line, Lines: 1}
	m, err := bus.BatchMsg(bus.DefaultPrefix, span, jsonl, 1)
	require.NoError(t, err)
	var bd bus.BatchDecoder
	var d bus.EntryDecoder
	n := 0
	require.NoError(t, bd.Entries(m.Header, m.Data, func(data []byte) error {
		n++
		var got schema.Entry
		require.NoError(t, d.Decode(data, &got))
		requireSameLeaves(t, "bus.BatchMsg → BatchDecoder", &e, &got)
		return nil
	}))
	require.Equal(t, 1, n)
}

// TestEntryFieldTable_Parquet: every field of the table, read by DuckDB
// from the Parquet file the writer made, by its column path, holds the
// entry's value.
func TestEntryFieldTable_Parquet(t *testing.T) {
	e := entrytest.Filled(t, "")
	dir := t.TempDir()
	writeAll(t, mustWriter(t, parquet.Config{Dir: dir}), []schema.Entry{e})
	db := openDuckDB(t)
	table := entrytest.ByGo()
	byJSON := map[string]schema.Field{}
	for _, f := range table {
		byJSON[f.JSON] = f
	}
	for path, v := range entrytest.Leaves(&e) {
		f := entrytest.Field(t, table, path)
		require.NotEmpty(t, f.Column, "entry field %s has no Parquet column", path)
		expr, want := columnExpr(t, table, path), ""
		switch v := v.(type) {
		case time.Time:
			expr, want = "epoch_us("+expr+")", strconv.FormatInt(v.UnixMicro(), 10)
		case json.RawMessage:
			want = string(v)
		case float64:
			want = strconv.FormatFloat(v, 'f', -1, 64)
		default:
			if f.Type == schema.TypeLabels {
				expr = "to_json(" + expr + ")"
				b, err := json.Marshal(e.Labels)
				require.NoError(t, err)
				v = string(b)
			}
			want = fmt.Sprint(v)
		}
		var got *string
		require.NoError(t, db.QueryRow(`SELECT CAST(`+expr+` AS VARCHAR) FROM `+glob(dir)+` t`).Scan(&got),
			"entry field %s: Parquet column %s (pipeline/export row.go, packed.go)", path, expr)
		require.NotNil(t, got, "entry field %s: Parquet column %s is NULL", path, expr)
		require.Equal(t, want, *got, "entry field %s: Parquet column %s", path, expr)
	}
}

// columnExpr returns the DuckDB expression of the Parquet column of a
// leaf path of entrytest.Leaves: "ToolCalls[0].Input" is
// struct_extract("tool_calls"[1], 'input').
func columnExpr(t *testing.T, table map[string]schema.Field, leaf string) string {
	expr, goPath := "", ""
	for i, seg := range strings.Split(leaf, ".") {
		name, idx, hasIdx := strings.Cut(seg, "[")
		goPath = strings.TrimPrefix(goPath+"."+name, ".")
		f, ok := table[goPath]
		require.True(t, ok, "entry field %s is not in the field table", goPath)
		col := f.Column[strings.LastIndexByte(f.Column, '.')+1:]
		if i == 0 {
			expr = `t."` + col + `"`
		} else {
			expr = "struct_extract(" + expr + ", '" + col + "')"
		}
		if hasIdx {
			n, err := strconv.Atoi(strings.TrimSuffix(idx, "]"))
			require.NoError(t, err)
			expr = fmt.Sprintf("(%s)[%d]", expr, n+1)
		}
	}
	return expr
}

// TestEntryFieldTable_Redaction: metadata mode empties the fields the
// table marks redacted and keeps every other; redacted mode replaces a
// secret in each of the first and leaves it in every other.
func TestEntryFieldTable_Redaction(t *testing.T) {
	table := entrytest.ByGo()
	const secret = " ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123"
	for _, c := range []struct {
		mode   redact.Mode
		suffix string
	}{{redact.Metadata, ""}, {redact.Redacted, secret}} {
		t.Run(c.mode.String(), func(t *testing.T) {
			e := entrytest.Filled(t, c.suffix)
			before := entrytest.Leaves(&e)
			r, err := redact.New(redact.Config{Mode: c.mode})
			require.NoError(t, err)
			r.Entry(&e)
			after := entrytest.Leaves(&e)
			for path, v := range before {
				f := entrytest.Field(t, table, path)
				got := after[path]
				switch {
				case f.Redact == schema.Kept:
					require.Equal(t, v, got, "entry field %s changed by redaction; the field table says Kept", path)
				case c.mode == redact.Metadata:
					require.Empty(t, got, "entry field %s not emptied in metadata mode; the field table says it is redacted (pipeline/redact/entry.go)", path)
				default:
					s := fmt.Sprintf("%s", got)
					require.NotContains(t, s, "ghp_", "entry field %s: its secret not redacted; the field table says it is (pipeline/redact/entry.go)", path)
					require.Contains(t, s, "[REDACTED:", "entry field %s", path)
					if f.Redact == schema.RedactJSON {
						require.True(t, json.Valid(got.(json.RawMessage)), "entry field %s: %s", path, got)
					}
				}
			}
			require.Len(t, after, len(before))
		})
	}
}

// TestEntryFieldTable_Fitting: an entry too large for its message
// (bus.FitEntryMsg) is shortened as the table says: the dropped fields
// gone, the cut ones shortened, the whole-or-nothing ones left out, the
// mark set, every other field as it was; and with less room, the
// omittable lists' elements left out and counted.
func TestEntryFieldTable_Fitting(t *testing.T) {
	table := entrytest.ByGo()
	big := func() schema.Entry {
		e := entrytest.Filled(t, "")
		for path := range entrytest.Leaves(&e) {
			f := entrytest.Field(t, table, path)
			switch f.Fit {
			case schema.FitDropped, schema.FitCut, schema.FitWhole:
				setLeaf(t, &e, path, strings.Repeat("x", 100_000))
			}
		}
		return e
	}
	// size returns the message size of e with the fields fitting may
	// change emptied and, when lists, the omittable lists too.
	size := func(lists bool) int {
		e := big()
		for path := range entrytest.Leaves(&e) {
			switch entrytest.Field(t, table, path).Fit {
			case schema.FitDropped, schema.FitCut, schema.FitWhole:
				setLeaf(t, &e, path, "")
			}
		}
		for path, f := range table {
			if lists && f.Fit == schema.FitOmitted {
				reflect.ValueOf(&e).Elem().FieldByName(path).SetZero()
			}
		}
		m := bus.EntryMsg(bus.DefaultPrefix, &e, nil)
		return len(m.Data) + bus.HeaderSize(m.Header)
	}
	for _, c := range []struct {
		name    string
		maxSize int
		omitted bool
	}{{"cut", size(false) + 3000, false}, {"omitted", size(true) + 10, true}} {
		t.Run(c.name, func(t *testing.T) {
			e := big()
			before := entrytest.Leaves(&e)
			count := func(e *schema.Entry) (n int64) {
				for path, v := range entrytest.Leaves(e) {
					if entrytest.Field(t, table, path).Fit == schema.FitCount {
						n += reflect.ValueOf(v).Int()
					}
				}
				return n
			}
			counted := count(&e)
			lists := func(e *schema.Entry) (n int64) {
				for path, f := range table {
					if f.Fit == schema.FitOmitted {
						n += int64(reflect.ValueOf(e).Elem().FieldByName(path).Len())
					}
				}
				return n
			}
			listed := lists(&e)
			m, shortened, err := bus.FitEntryMsg(bus.DefaultPrefix, &e, c.maxSize, nil)
			require.NoError(t, err, "bus.FitEntryMsg: a field the table says fitting shortens (FitDropped, FitCut, FitWhole) was not (pipeline/bus/fit.go)")
			require.True(t, shortened)
			require.LessOrEqual(t, len(m.Data)+bus.HeaderSize(m.Header), c.maxSize)
			var got schema.Entry
			var d bus.EntryDecoder
			require.NoError(t, d.Decode(m.Data, &got))
			after := entrytest.Leaves(&got)
			for path, v := range before {
				f := entrytest.Field(t, table, path)
				if i := strings.IndexByte(path, '['); i > 0 && table[path[:i]].Fit == schema.FitOmitted {
					if _, kept := after[path]; !kept {
						require.True(t, c.omitted, "entry field %s left out by fitting with room for it", path)
						continue
					}
				}
				g := after[path]
				switch f.Fit {
				case schema.FitKept:
					require.Equal(t, v, g, "entry field %s changed by fitting; the field table says FitKept", path)
				case schema.FitDropped:
					require.Empty(t, g, "entry field %s kept by fitting; the field table says FitDropped (pipeline/bus/fit.go)", path)
				case schema.FitCut:
					s := fmt.Sprintf("%s", g)
					require.Less(t, len(s), 100_000, "entry field %s not cut by fitting; the field table says FitCut (pipeline/bus/fit.go)", path)
					require.True(t, strings.HasPrefix(fmt.Sprintf("%s", v), s), "entry field %s: %q is not a prefix of what it held", path, s)
					if !c.omitted {
						require.NotEmpty(t, s, "entry field %s cut to nothing with room for some", path)
					}
				case schema.FitWhole:
					require.Empty(t, g, "entry field %s longer than the room kept by fitting; the field table says FitWhole", path)
				case schema.FitMark:
					require.Equal(t, true, g, "entry field %s: the field table says FitMark", path)
				case schema.FitCount:
				case schema.FitOmitted:
					require.Equal(t, v, g, "entry field %s", path)
				default:
					t.Fatalf("entry field %s: fitting %d: teach this test", path, f.Fit)
				}
			}
			if c.omitted {
				for path := range table {
					if table[path].Fit == schema.FitOmitted {
						require.Zero(t, reflect.ValueOf(got).FieldByName(path).Len(), "list %s kept with no room for it", path)
					}
				}
			}
			require.Equal(t, counted+listed-lists(&got), count(&got), "the counts of the elements left out (FitCount fields)")
		})
	}
}

// setLeaf sets the string or raw JSON field at a leaf path of
// entrytest.Leaves to s (a raw JSON field to the document {"n":s}, or
// nothing when s is empty).
func setLeaf(t *testing.T, e *schema.Entry, path, s string) {
	v := reflect.ValueOf(e).Elem()
	for seg := range strings.SplitSeq(path, ".") {
		name, idx, hasIdx := strings.Cut(seg, "[")
		if v.Kind() == reflect.Pointer {
			v = v.Elem()
		}
		v = v.FieldByName(name)
		if hasIdx {
			n, err := strconv.Atoi(strings.TrimSuffix(idx, "]"))
			require.NoError(t, err)
			v = v.Index(n)
		}
	}
	switch {
	case v.Kind() == reflect.String:
		v.SetString(s)
	case v.Type() == reflect.TypeFor[json.RawMessage]() && s == "":
		v.SetZero()
	case v.Type() == reflect.TypeFor[json.RawMessage]():
		v.SetBytes([]byte(`{"n":"` + s + `"}`))
	default:
		t.Fatalf("setLeaf %s: a field of type %s", path, v.Type())
	}
}
