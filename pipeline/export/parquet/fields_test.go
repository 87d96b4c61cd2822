package parquet_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
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

// The entry is written out in several places: its JSON encoder, the
// stream's fast decoder, the Parquet row (pack, unpack), redaction and
// fitting. These tests set every field of [schema.Entry], found by
// reflection, and take the entry through each form: a field added to the
// entry and forgotten in one of them fails here, with its name.

// filledEntry returns an entry with every field, at every depth, set to
// a value of its own (one element in each list and map).
func filledEntry(t *testing.T) schema.Entry {
	var e schema.Entry
	n := 0
	fill(t, reflect.ValueOf(&e).Elem(), &n)
	// The few fields whose values the forms check.
	e.Format, e.Kind, e.Role = schema.FormatClaudeCode, schema.KindMessage, schema.RoleAssistant
	return e
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

func fill(t *testing.T, v reflect.Value, n *int) {
	*n++
	switch v.Type() {
	case timeType: // microseconds: what Parquet keeps
		v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, *n*1000, time.UTC)))
		return
	case rawType:
		v.SetBytes(fmt.Appendf(nil, `{"n":%d}`, *n))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("v%d", *n))
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.25)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(t, p.Elem(), n)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(t, v.Field(i), n)
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(t, s.Index(0), n)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, val := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(t, k, n)
		fill(t, val, n)
		m.SetMapIndex(k, val)
		v.Set(m)
	default:
		t.Fatalf("entry field of kind %s: teach fill to set it", v.Kind())
	}
}

// TestEntryFields_JSONAndStreamDecoder: the entry's JSON (its encoder)
// read back by encoding/json and by the stream's fast decoder gives
// every field back.
func TestEntryFields_JSONAndStreamDecoder(t *testing.T) {
	e := filledEntry(t)
	data := e.AppendJSON(nil)
	var std schema.Entry
	require.NoError(t, json.Unmarshal(data, &std))
	require.Equal(t, entrytest.Leaves(&e), entrytest.Leaves(&std), "encoding/json of AppendJSON")

	var fast schema.Entry
	var d bus.EntryDecoder
	require.NoError(t, d.Decode(data, &fast))
	require.Equal(t, entrytest.Leaves(&e), entrytest.Leaves(&fast), "bus.EntryDecoder of AppendJSON")
}

// TestEntryFields_Parquet: every key of the entry's JSON is a column of
// its Parquet row (or a field of one) holding the same value, read back
// by DuckDB.
func TestEntryFields_Parquet(t *testing.T) {
	e := filledEntry(t)
	var want map[string]any
	require.NoError(t, json.Unmarshal(e.AppendJSON(nil), &want))

	dir := t.TempDir()
	writeAll(t, mustWriter(t, parquet.Config{Dir: dir}), []schema.Entry{e})
	var row string
	require.NoError(t, openDuckDB(t).QueryRow(`SELECT to_json(t)::VARCHAR FROM `+glob(dir)+` t`).Scan(&row))
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(row), &got))

	for k, w := range want {
		g, ok := got[k]
		require.True(t, ok, "the entry's field %q is not a Parquet column (row.go, packed.go)", k)
		requireSameJSON(t, k, w, g)
	}
}

// requireSameJSON compares a value of the entry's JSON with the one
// DuckDB gives for its column: a timestamp in DuckDB's text, a JSON
// document held as text, and NULL list fields are read as what they mean.
func requireSameJSON(t *testing.T, path string, want, got any) {
	t.Helper()
	if g, ok := got.(string); ok {
		if _, isString := want.(string); !isString { // a JSON document kept as text
			var v any
			require.NoError(t, json.Unmarshal([]byte(g), &v), "%s: %q", path, g)
			got = v
		}
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		require.True(t, ok, "%s: %T, want an object", path, got)
		for k, wv := range w {
			gv, ok := g[k]
			require.True(t, ok, "the entry's field %s.%s is not in Parquet", path, k)
			requireSameJSON(t, path+"."+k, wv, gv)
		}
	case []any:
		g, ok := got.([]any)
		require.True(t, ok, "%s: %T, want a list", path, got)
		require.Len(t, g, len(w), path)
		for i := range w {
			requireSameJSON(t, fmt.Sprintf("%s[%d]", path, i), w[i], g[i])
		}
	case string:
		if g, ok := got.(string); ok && g == w {
			return
		}
		if wt, err := time.Parse(time.RFC3339Nano, w); err == nil {
			gt, err := time.Parse("2006-01-02 15:04:05.999999-07", fmt.Sprint(got))
			require.NoError(t, err, "%s: %v is not a timestamp", path, got)
			require.True(t, wt.Equal(gt), "%s: %v, want %v", path, gt, wt)
			return
		}
		require.Equal(t, w, got, path)
	default:
		require.Equal(t, want, got, path)
	}
}

// redactionLeaves splits the leaf paths of an entry in the fields
// redaction works on (emptied in metadata mode, their secrets replaced in
// redacted mode) and those it keeps, as the field table says
// (schema/fields.go: a new field is put in one or the other there).
func redactionLeaves(t *testing.T, paths map[string]any) (redacted, kept []string) {
	table := entrytest.ByGo()
	for path := range paths {
		if entrytest.Field(t, table, path).Redact != schema.Kept {
			redacted = append(redacted, path)
		} else {
			kept = append(kept, path)
		}
	}
	return redacted, kept
}

// TestEntryFields_Redaction: metadata mode empties the redacted fields
// and keeps every other one as it was.
func TestEntryFields_Redaction(t *testing.T) {
	e := filledEntry(t)
	before := entrytest.Leaves(&e)
	redactedLeaves, keptLeaves := redactionLeaves(t, before)
	for path := range before {
		require.True(t, slices.Contains(redactedLeaves, path) != slices.Contains(keptLeaves, path),
			"entry field %s: say in redactedLeaves or keptLeaves (not both) whether redaction works on it (pipeline/redact/entry.go)", path)
	}
	r, err := redact.New(redact.Config{Mode: redact.Metadata})
	require.NoError(t, err)
	r.Entry(&e)
	after := entrytest.Leaves(&e)
	for path, v := range before {
		if slices.Contains(redactedLeaves, path) {
			require.Empty(t, after[path], "%s not emptied in metadata mode", path)
			continue
		}
		require.Equal(t, v, after[path], "%s changed by redaction", path)
	}
}

// TestEntryFields_Fitting: an entry too large for a message is cut in
// its text only: every other field reaches the stream as it was.
func TestEntryFields_Fitting(t *testing.T) {
	e := filledEntry(t)
	small := bus.EntryMsg(bus.DefaultPrefix, &e, nil)
	maxSize := len(small.Data) + bus.HeaderSize(small.Header) + 64
	e.Text = strings.Repeat("x", 100_000)
	before := entrytest.Leaves(&e)
	m, shortened, err := bus.FitEntryMsg(bus.DefaultPrefix, &e, maxSize, nil)
	require.NoError(t, err)
	require.True(t, shortened)
	var got schema.Entry
	var d bus.EntryDecoder
	require.NoError(t, d.Decode(m.Data, &got))
	after := entrytest.Leaves(&got)
	require.Less(t, len(got.Text), 100_000)
	require.True(t, got.Truncated)
	for path, v := range before {
		switch path {
		case "Text", "Raw", "Truncated":
			continue
		}
		require.Equal(t, v, after[path], "%s changed by fitting", path)
	}
}
