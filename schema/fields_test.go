package schema_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/internal/testutil/entrytest"
	"github.com/sessionpipe/sessionpipe/schema"
)

// wantFields returns what the field table must say of the fields of typ
// and of the structs they hold, found by reflection.
func wantFields(t *testing.T, typ reflect.Type, jsonParent, goParent string, out []schema.Field) []schema.Field {
	t.Helper()
	for i := range typ.NumField() {
		sf := typ.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		require.NotEmpty(t, name, "%s.%s has no JSON name", typ, sf.Name)
		f := schema.Field{
			JSON: strings.TrimPrefix(jsonParent+"."+name, "."), Go: strings.TrimPrefix(goParent+"."+sf.Name, "."),
			Omitempty: opts == "omitempty",
		}
		ft := sf.Type
		if ft.Kind() == reflect.Pointer {
			f.Pointer, ft = true, ft.Elem()
		}
		var elem reflect.Type // the struct whose fields follow
		switch {
		case ft == reflect.TypeFor[time.Time]():
			f.Type = schema.TypeTime
		case ft == reflect.TypeFor[json.RawMessage]():
			f.Type = schema.TypeJSON
		case ft.Kind() == reflect.String:
			f.Type = schema.TypeString
		case ft.Kind() == reflect.Int || ft.Kind() == reflect.Int64:
			f.Type = schema.TypeInt
		case ft.Kind() == reflect.Float64:
			f.Type = schema.TypeFloat
		case ft.Kind() == reflect.Bool:
			f.Type = schema.TypeBool
		case ft.Kind() == reflect.Struct:
			f.Type, elem = schema.TypeObject, ft
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			f.Type, elem = schema.TypeList, ft.Elem()
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.String:
			f.Type = schema.TypeStrings
		case ft.Kind() == reflect.Map && ft.Key().Kind() == reflect.String && ft.Elem().Kind() == reflect.String:
			f.Type = schema.TypeLabels
		default:
			t.Fatalf("%s: a field of type %s: add a FieldType for it (schema/fields.go) and teach every form", f.Go, sf.Type)
		}
		out = append(out, f)
		if elem != nil {
			out = wantFields(t, elem, f.JSON, f.Go, out)
		}
	}
	return out
}

// TestFields: the field table names every field of Entry, at every
// depth, in declaration order, with its JSON name, Go type and omitempty
// as the struct tags say; every field has a Parquet column of the same
// path. A field added to Entry and not to the table fails here.
func TestFields(t *testing.T) {
	want := wantFields(t, reflect.TypeFor[schema.Entry](), "", "", nil)
	got := schema.Fields()
	for i := range max(len(want), len(got)) {
		require.Less(t, i, len(got), "entry field %s is not in the field table (schema/fields.go)", pick(want, i).Go)
		require.Less(t, i, len(want), "the field table's %s is not a field of Entry", pick(got, i).Go)
		w, g := want[i], got[i]
		require.Equal(t, w.Go, g.Go, "row %d of the field table: fields in declaration order, every one of them (schema/fields.go)", i)
		require.Equal(t, w.JSON, g.JSON, "%s: JSON path", g.Go)
		require.Equal(t, w.Type, g.Type, "%s: type", g.Go)
		require.Equal(t, w.Pointer, g.Pointer, "%s: pointer", g.Go)
		require.Equal(t, w.Omitempty, g.Omitempty, "%s: omitempty", g.Go)
		require.Equal(t, g.JSON, g.Column, "%s: the Parquet column is named as the JSON field", g.Go)
		if g.Redact != schema.Kept {
			require.Contains(t, []schema.FieldType{schema.TypeString, schema.TypeJSON}, g.Type, "%s: only text is redacted", g.Go)
		}
	}
}

func pick(fs []schema.Field, i int) schema.Field {
	if i < len(fs) {
		return fs[i]
	}
	return schema.Field{}
}

// TestFields_JSONOrder: the canonical JSON of an entry with every field
// set holds the table's fields, in its order, at every depth.
func TestFields_JSONOrder(t *testing.T) {
	e := entrytest.Filled(t, "")
	data := e.AppendJSON(nil)
	var got []string
	keys(t, json.NewDecoder(bytes.NewReader(data)), "", &got)
	var want []string
	for _, f := range schema.Fields() {
		want = append(want, f.JSON)
	}
	require.Equal(t, want, got, "keys of %s", data)
}

// keys appends the dotted paths of the keys of the JSON value at d, in
// order, with list elements named as their list (their keys once).
func keys(t *testing.T, d *json.Decoder, path string, out *[]string) {
	tok, err := d.Token()
	require.NoError(t, err)
	switch tok {
	case json.Delim('{'):
		for d.More() {
			k, err := d.Token()
			require.NoError(t, err)
			p := strings.TrimPrefix(path+"."+k.(string), ".")
			if !contains(*out, p) {
				*out = append(*out, p)
			}
			if p == "raw" || p == "tool_calls.input" || p == "labels" {
				var skip json.RawMessage // a raw JSON document or a map: no fields inside
				require.NoError(t, d.Decode(&skip))
				continue
			}
			keys(t, d, p, out)
		}
		_, err = d.Token()
		require.NoError(t, err)
	case json.Delim('['):
		for d.More() {
			keys(t, d, path, out)
		}
		_, err = d.Token()
		require.NoError(t, err)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestFieldNames: the names under each object of the table.
func TestFieldNames(t *testing.T) {
	require.Equal(t, []string{"input", "output", "cache_read", "cache_write", "cache_write_5m", "cache_write_1h", "reasoning", "speed"},
		schema.FieldNames("usage"))
	require.Equal(t, []string{"id", "name", "input"}, schema.FieldNames("tool_calls"))
	top := schema.FieldNames("")
	require.Equal(t, "format", top[0])
	require.Equal(t, "raw", top[len(top)-1])
	require.NotContains(t, top, "input")
	require.Nil(t, schema.FieldNames("text"))
}
