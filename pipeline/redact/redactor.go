package redact

import "unsafe"

// Config configures a [Redactor].
type Config struct {
	// Mode is what [Redactor.Entry] does; the zero value is Redacted.
	Mode Mode
	// Disable lists kinds not to redact, e.g. [Password] and [Secret]
	// where their heuristics get in the way.
	Disable []Kind
}

// Validate reports a Mode or a Kind out of range as a *[ConfigError]
// wrapping [ErrInvalidConfig].
func (c Config) Validate() error {
	if c.Mode >= numModes {
		return invalid("content", uint8(c.Mode), "want full, redacted or metadata")
	}
	for _, k := range c.Disable {
		if k >= NumKinds {
			return invalid("disable", uint8(k), "no such kind")
		}
	}
	return nil
}

// Redactor finds secrets and replaces them by markers. It is immutable and
// safe for concurrent use. Its methods never modify their input: they
// return it as is when nothing was found (without allocating) and a new
// copy otherwise.
type Redactor struct {
	mode Mode
	off  [NumKinds]bool
}

// New returns a Redactor for cfg.
func New(cfg Config) (*Redactor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Redactor{mode: cfg.Mode}
	for _, k := range cfg.Disable {
		r.off[k] = true
	}
	return r, nil
}

// Mode returns the Redactor's mode.
func (r *Redactor) Mode() Mode { return r.mode }

// maxStackSpans is the number of secrets found before the span list moves
// to the heap.
const maxStackSpans = 8

// Bytes returns b with every secret replaced by its marker, counting them
// in st (which may be nil). It returns b itself when nothing was found.
// Bytes treats b as text; text that holds JSON (a tool's output, a
// command) is also searched with its escapes undone, so that a secret
// written with \n or \u escapes is found and replaced whole. For a JSON
// value use [Redactor.JSON], which keeps it valid.
func (r *Redactor) Bytes(b []byte, st *Stats) []byte {
	var buf [maxStackSpans]span
	spans := r.findText(b, buf[:0])
	if len(spans) == 0 {
		return b
	}
	return replace(make([]byte, 0, grown(len(b), spans)), b, spans, st)
}

// String is [Redactor.Bytes] for a string: it returns s itself when
// nothing was found.
func (r *Redactor) String(s string, st *Stats) string {
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	var buf [maxStackSpans]span
	spans := r.findText(b, buf[:0])
	if len(spans) == 0 {
		return s
	}
	out := replace(make([]byte, 0, grown(len(b), spans)), b, spans, st)
	return unsafe.String(unsafe.SliceData(out), len(out))
}
