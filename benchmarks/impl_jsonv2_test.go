//go:build goexperiment.jsonv2

package benchmarks

import (
	"encoding/json/jsontext"
	jsonv2 "encoding/json/v2"
)

// stdName names encoding/json built with GOEXPERIMENT=jsonv2, where it
// is implemented on top of encoding/json/v2.
const stdName = "encoding-json-v1onv2"

// jsonV2Impls returns the encoding/json/v2 implementation.
func jsonV2Impls() []impl {
	return []impl{{name: "encoding-json-v2", newDecoder: libDecoder[v2Content](v2Unmarshal)}}
}

func v2Unmarshal(b []byte, v any) error { return jsonv2.Unmarshal(b, v) }

// v2Content decodes message.content from the decoder's stream (v2's
// UnmarshalerFrom): no second pass over the value, unlike UnmarshalJSON.
type v2Content []block

func (c *v2Content) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() == '[' {
		return jsonv2.UnmarshalDecode(dec, (*[]block)(c))
	}
	*c = nil
	return dec.SkipValue()
}
