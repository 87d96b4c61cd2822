package benchmarks

import (
	"encoding/json"
	"unsafe"

	"github.com/bytedance/sonic"
	goccy "github.com/goccy/go-json"
	segjson "github.com/segmentio/encoding/json"
)

// libDecoder returns the decoder of a reflection-based library: one
// Unmarshal of each line into a zeroed line[C], as a user of the library
// writes it.
func libDecoder[C ~[]block](unmarshal func([]byte, any) error) func() decodeFunc {
	return func() decodeFunc {
		return func(c *corpus, visit func(*record)) error {
			for i, b := range c.lines {
				var l line[C]
				if err := unmarshal(b, &l); err != nil {
					return lineError(i, err)
				}
				visit(asRecord(&l))
			}
			return nil
		}
	}
}

// content decodes message.content with unmarshal when it is an array of
// blocks and leaves it nil otherwise (a Claude Code prompt string).
func content(data []byte, dst *[]block, unmarshal func([]byte, any) error) error {
	if len(data) > 0 && data[0] == '[' {
		return unmarshal(data, dst)
	}
	*dst = nil
	return nil
}

func stdUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

type stdContent []block

func (c *stdContent) UnmarshalJSON(b []byte) error {
	return content(b, (*[]block)(c), stdUnmarshal)
}

func segUnmarshal(b []byte, v any) error { return segjson.Unmarshal(b, v) }

type segContent []block

func (c *segContent) UnmarshalJSON(b []byte) error {
	return content(b, (*[]block)(c), segUnmarshal)
}

func goccyUnmarshal(b []byte, v any) error { return goccy.Unmarshal(b, v) }

type goccyContent []block

func (c *goccyContent) UnmarshalJSON(b []byte) error {
	return content(b, (*[]block)(c), goccyUnmarshal)
}

// sonicUnmarshal is sonic.Unmarshal: sonic.ConfigDefault, which copies
// the input before decoding and validates the values it skips.
func sonicUnmarshal(b []byte, v any) error { return sonic.Unmarshal(b, v) }

type sonicContent []block

func (c *sonicContent) UnmarshalJSON(b []byte) error {
	return content(b, (*[]block)(c), sonicUnmarshal)
}

// sonicFastUnmarshal is sonic.ConfigFastest reading the line in place
// (UnmarshalFromString over the line's bytes: no copy; strings alias the
// input). ConfigFastest does not validate the values it skips.
func sonicFastUnmarshal(b []byte, v any) error {
	return sonic.ConfigFastest.UnmarshalFromString(unsafe.String(unsafe.SliceData(b), len(b)), v)
}

type sonicFastContent []block

func (c *sonicFastContent) UnmarshalJSON(b []byte) error {
	return content(b, (*[]block)(c), sonicFastUnmarshal)
}
