// Package entrytest builds, for tests, a [schema.Entry] with every field
// set, found by reflection, and lists an entry's fields by path, so that
// a test of a form of the entry covers a field added tomorrow without
// being edited. It is checked against the field table [schema.Fields].
package entrytest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sessionpipe/sessionpipe/schema"
)

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// Filled returns an entry whose every field, at every depth, holds a
// non-zero value of its own: strings "v<n>" followed by suffix, integers
// n, floats n+0.25, true, a time at n microseconds past a second, raw JSON
// {"n":"v<n><suffix>"}, one element in each list and map, every pointer
// set. Format, Kind and Role hold valid values. A field of a kind it
// cannot set fails tb.
func Filled(tb testing.TB, suffix string) schema.Entry {
	tb.Helper()
	var e schema.Entry
	n := 0
	fill(tb, reflect.ValueOf(&e).Elem(), &n, suffix)
	e.Format, e.Kind, e.Role = schema.FormatClaudeCode, schema.KindMessage, schema.RoleAssistant
	return e
}

func fill(tb testing.TB, v reflect.Value, n *int, suffix string) {
	*n++
	switch v.Type() {
	case timeType: // whole microseconds: what Parquet keeps
		v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, *n*1000, time.UTC)))
		return
	case rawType:
		b, _ := json.Marshal(fmt.Sprintf("v%d%s", *n, suffix))
		v.SetBytes(fmt.Appendf(nil, `{"n":%s}`, b))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("v%d%s", *n, suffix))
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.25)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(tb, p.Elem(), n, suffix)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(tb, v.Field(i), n, suffix)
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(tb, s.Index(0), n, suffix)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, val := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(tb, k, n, suffix)
		fill(tb, val, n, suffix)
		m.SetMapIndex(k, val)
		v.Set(m)
	default:
		tb.Fatalf("entry field of kind %s: teach entrytest.Filled to set it", v.Kind())
	}
}

// Leaves returns every leaf field of e by its Go path with list indexes
// ("ToolCalls[0].Input", "Reaction.Emojis[0]"), with its value: a nil
// pointer, an empty list and a map are leaves themselves (the map as
// fmt prints it, keys sorted). Time and raw JSON values are leaves.
func Leaves(e *schema.Entry) map[string]any {
	out := map[string]any{}
	leaves(reflect.ValueOf(e).Elem(), "", out)
	return out
}

func leaves(v reflect.Value, path string, out map[string]any) {
	if v.Type() == timeType || v.Type() == rawType {
		out[path] = v.Interface()
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			out[path] = nil
			return
		}
		leaves(v.Elem(), path, out)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				leaves(v.Field(i), strings.TrimPrefix(path+"."+f.Name, "."), out)
			}
		}
	case reflect.Slice:
		if v.Len() == 0 {
			out[path] = "[]"
		}
		for i := range v.Len() {
			leaves(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
		}
	case reflect.Map:
		out[path] = fmt.Sprint(v.Interface())
	default:
		out[path] = v.Interface()
	}
}

var index = regexp.MustCompile(`\[\d+\]`)

// TablePath returns the [schema.Field.Go] path of a leaf path of
// [Leaves]: its list indexes removed.
func TablePath(leaf string) string { return index.ReplaceAllString(leaf, "") }

// ByGo returns the field table ([schema.Fields]) by Go path.
func ByGo() map[string]schema.Field {
	m := map[string]schema.Field{}
	for _, f := range schema.Fields() {
		m[f.Go] = f
	}
	return m
}

// Field returns the table's row of a leaf path of [Leaves], failing tb
// when the table has none: a field of the entry the table does not
// describe.
func Field(tb testing.TB, table map[string]schema.Field, leaf string) schema.Field {
	tb.Helper()
	f, ok := table[TablePath(leaf)]
	if !ok {
		tb.Fatalf("entry field %s is not in the field table (schema/fields.go): add it there", TablePath(leaf))
	}
	return f
}
