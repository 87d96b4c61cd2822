package redact

import "fmt"

// Mode says how much of an entry's free text leaves the host.
//
// The zero value is [Redacted], the default: an unset mode never publishes
// secrets.
type Mode uint8

const (
	// Redacted replaces every secret found (see [Kind]) by a marker and
	// keeps the rest of the text as it was. It is the default.
	Redacted Mode = iota
	// Full changes nothing.
	Full
	// Metadata drops all free text: an entry's Text, Title, CommandArgs,
	// tool inputs, tool result contents and Raw line are emptied; ids,
	// names, models, counts, usage, timestamps and paths are kept.
	Metadata

	numModes
)

var modeNames = [numModes]string{Redacted: "redacted", Full: "full", Metadata: "metadata"}

// ParseMode returns the Mode named s: "full", "redacted" or "metadata".
// The empty string is [Redacted]. Any other name gives an error wrapping
// [ErrUnknownMode].
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return Redacted, nil
	}
	for m, name := range modeNames {
		if s == name {
			return Mode(m), nil
		}
	}
	return Redacted, fmt.Errorf("%w %q (want full, redacted or metadata)", ErrUnknownMode, s)
}

// String returns the mode's name as [ParseMode] reads it.
func (m Mode) String() string {
	if m < numModes {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// MarshalText returns the mode's name, so that a Mode can sit in a YAML or
// JSON configuration.
func (m Mode) MarshalText() ([]byte, error) {
	if m >= numModes {
		return nil, fmt.Errorf("%w: %d", ErrUnknownMode, uint8(m))
	}
	return []byte(modeNames[m]), nil
}

// UnmarshalText parses a name with [ParseMode].
func (m *Mode) UnmarshalText(b []byte) error {
	v, err := ParseMode(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Set parses a name with [ParseMode]; with String it makes *Mode a
// flag.Value.
func (m *Mode) Set(s string) error { return m.UnmarshalText([]byte(s)) }
