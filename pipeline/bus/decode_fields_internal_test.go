package bus

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionpipe/sessionpipe/schema"
)

// TestEntryDecoder_KnowsTheFieldTable: the decoder's switch knows every
// top-level name of the field table (schema.Fields), which entryFields
// is made of. The nested objects' names are checked by the round trip
// of pipeline/export (TestEntryFieldTable_JSON).
func TestEntryDecoder_KnowsTheFieldTable(t *testing.T) {
	require.Equal(t, schema.FieldNames(""), entryFields)
	for _, name := range entryFields {
		var d EntryDecoder
		var e schema.Entry
		d.s.Reset([]byte(`{"` + name + `":null}`))
		require.True(t, d.s.More() && d.s.EnterObject() && d.s.NextField())
		known, _ := d.entryField(&e, d.s.Key())
		require.True(t, known, "field %q of the field table unknown to EntryDecoder.entryField (decode.go)", name)
	}
}
