package parquet

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/entrytest"
	"github.com/sessionpipe/sessionpipe/schema"
)

// The Parquet row against the field table (schema.Fields): its columns
// are the table's, and an entry with every field set, packed into a
// buffered row (prow.pack) and unpacked into the row the writer writes
// (prow.unpack), gives every field back; entryBytes counts every string.

// rowColumns returns the Parquet column paths of the struct typ, its
// structs' and lists' fields after them.
func rowColumns(typ reflect.Type, parent string, out []string) []string {
	for i := range typ.NumField() {
		sf := typ.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("parquet"), ",")
		path := strings.TrimPrefix(parent+"."+name, ".")
		out = append(out, path)
		ft := sf.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			out = rowColumns(ft, path, out)
		}
	}
	return out
}

// TestEntryFieldTable_RowColumns: the Parquet row's columns are seq, key
// and the table's columns, in its order.
func TestEntryFieldTable_RowColumns(t *testing.T) {
	want := []string{"seq", "key"}
	for _, f := range schema.Fields() {
		if f.Column != "" {
			want = append(want, f.Column)
		}
	}
	require.Equal(t, want, rowColumns(reflect.TypeFor[row](), "", nil), "the columns of row (row.go) against the field table (schema/fields.go)")
}

// TestEntryFieldTable_PackUnpack: every field of an entry packed and
// unpacked into its row holds the entry's value in the table's column.
func TestEntryFieldTable_PackUnpack(t *testing.T) {
	e := entrytest.Filled(t, "")
	var (
		a   arena
		tb  tables
		sc  scratch
		r   prow
		out row
	)
	r.pack(&e, 7, &a, &tb)
	r.unpack(&out, &a, &tb, &sc)
	require.Equal(t, int64(7), out.Seq)
	require.Equal(t, e.Key(), out.Key)

	cols := map[string]any{}
	rowValues(reflect.ValueOf(out), "", cols)
	table := entrytest.ByGo()
	for leaf, v := range entrytest.Leaves(&e) {
		col := columnPath(t, table, leaf)
		got, ok := cols[col]
		require.True(t, ok, "entry field %s: no value in the row's column %s (packed.go pack/unpack, row.go)", leaf, col)
		require.Equal(t, normalise(v), got, "entry field %s: row column %s (packed.go pack/unpack)", leaf, col)
	}
}

// columnPath returns the column path, with list indexes, of a leaf path
// of entrytest.Leaves: "ToolCalls[0].Input" is "tool_calls[0].input".
func columnPath(t *testing.T, table map[string]schema.Field, leaf string) string {
	var col, goPath string
	for seg := range strings.SplitSeq(leaf, ".") {
		name, idx, hasIdx := strings.Cut(seg, "[")
		goPath = strings.TrimPrefix(goPath+"."+name, ".")
		f, ok := table[goPath]
		require.True(t, ok, "entry field %s is not in the field table (schema/fields.go)", goPath)
		require.NotEmpty(t, f.Column, "entry field %s has no Parquet column", goPath)
		col = strings.TrimPrefix(col+"."+f.Column[strings.LastIndexByte(f.Column, '.')+1:], ".")
		if hasIdx {
			col += "[" + idx
		}
	}
	return col
}

// rowValues collects the values of a row's columns by path with list
// indexes, pointers followed (a nil one is nil).
func rowValues(v reflect.Value, path string, out map[string]any) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			out[path] = nil
			return
		}
		if v.Elem().Kind() == reflect.Map {
			out[path] = fmt.Sprint(v.Elem().Interface())
			return
		}
		rowValues(v.Elem(), path, out)
	case reflect.Struct:
		for i := range v.NumField() {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("parquet"), ",")
			rowValues(v.Field(i), strings.TrimPrefix(path+"."+name, "."), out)
		}
	case reflect.Slice:
		if v.Len() == 0 {
			out[path] = "[]"
		}
		for i := range v.Len() {
			rowValues(v.Index(i), path+"["+strconv.Itoa(i)+"]", out)
		}
	case reflect.Int32, reflect.Int64:
		out[path] = v.Int()
	default:
		out[path] = v.Interface()
	}
}

// normalise returns an entry's value as its row holds it.
func normalise(v any) any {
	switch v := v.(type) {
	case time.Time:
		return v.UnixMicro()
	case json.RawMessage:
		return string(v)
	case int:
		return int64(v)
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.String {
		return rv.String() // Format, Kind, Role
	}
	return v
}

// TestEntryFieldTable_EntryBytes: each string of the entry (text, raw
// JSON, labels) counts in the bytes its row adds to a part's budget.
func TestEntryFieldTable_EntryBytes(t *testing.T) {
	table := entrytest.ByGo()
	const more = 1000
	base := entrytest.Filled(t, "")
	n0 := entryBytes(&base)
	for leaf := range entrytest.Leaves(&base) {
		f := entrytest.Field(t, table, leaf)
		switch f.Type {
		case schema.TypeString, schema.TypeJSON, schema.TypeLabels, schema.TypeStrings:
		default:
			continue
		}
		e := entrytest.Filled(t, "")
		grow(t, reflect.ValueOf(&e).Elem(), leaf, more)
		require.GreaterOrEqual(t, entryBytes(&e)-n0, int64(more), "entry field %s: %d bytes more not counted by entryBytes (part.go)", leaf, more)
	}
}

// grow makes the string, raw JSON, string list element or labels at a
// leaf path of v n bytes longer.
func grow(t *testing.T, v reflect.Value, leaf string, n int) {
	for seg := range strings.SplitSeq(leaf, ".") {
		name, idx, hasIdx := strings.Cut(seg, "[")
		if v.Kind() == reflect.Pointer {
			v = v.Elem()
		}
		v = v.FieldByName(name)
		if hasIdx {
			i, err := strconv.Atoi(strings.TrimSuffix(idx, "]"))
			require.NoError(t, err)
			v = v.Index(i)
		}
	}
	pad := strings.Repeat("x", n)
	switch {
	case v.Kind() == reflect.String:
		v.SetString(v.String() + pad)
	case v.Type() == reflect.TypeFor[json.RawMessage]():
		v.SetBytes(fmt.Appendf(nil, `{"pad":%q}`, strings.Repeat("x", n+v.Len()))) // longer by over n
	case v.Kind() == reflect.Map:
		v.SetMapIndex(reflect.ValueOf("k"+pad[:n/2]), reflect.ValueOf(pad[:n/2]))
	default:
		t.Fatalf("grow %s: a field of type %s", leaf, v.Type())
	}
}
