package formats

import (
	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// DefaultMaxHeldBytes is the default of [DecoderConfig.MaxHeldBytes].
const DefaultMaxHeldBytes = 16 << 20

// DecoderConfig configures a [Decoder]. The embedded parse.Config names the
// file (Path, also where a Claude Code subagent's .meta.json sidecar is
// looked for) and says what entries hold (Host, Text, Raw).
type DecoderConfig struct {
	parse.Config

	// Format forces the format instead of detecting it.
	Format schema.Format

	// MaxLineBytes is the line reader's limit, named in the error of an
	// over-long line ([Decoder.TooLong]); zero leaves it unnamed.
	MaxLineBytes int

	// MaxHeldBytes bounds the bytes of the lines held while the format is
	// undecided: once they reach it, the format is decided from them as
	// for a final file. Zero means DefaultMaxHeldBytes. Besides, at most
	// [DetectLines] lines are held.
	MaxHeldBytes int

	// OnFileError, when set, receives a problem of the file that is not
	// one of its lines: a Claude Code subagent sidecar that cannot be
	// read (the file is decoded without its agent type).
	OnFileError func(error)
}

// Validate reports a configuration a Decoder cannot use.
func (c DecoderConfig) Validate() error {
	switch {
	case c.Format != "" && !c.Format.Valid():
		return &ConfigError{Field: "format", Value: c.Format, Err: ErrUnknownFormat}
	case c.MaxLineBytes < 0:
		return &ConfigError{Field: "max_line_bytes", Value: c.MaxLineBytes, Err: ErrInvalidConfig}
	case c.MaxHeldBytes < 0:
		return &ConfigError{Field: "max_held_bytes", Value: c.MaxHeldBytes, Err: ErrInvalidConfig}
	}
	return nil
}

// Result is what one line of a file gave.
type Result struct {
	// Line is the line: its offset, end (where reading resumes, the
	// position to checkpoint) and number. Bytes is nil for an over-long
	// line and otherwise valid only during the callback.
	Line jsonl.Line

	// Entries are the line's entries, in order; a line holding several
	// JSON objects gives several. They are valid only during the
	// callback: copy an Entry (a shallow copy is enough, nothing in it
	// aliases the line) to keep it.
	Entries []schema.Entry

	// Err, when not nil, locates what was wrong with the line: a
	// *schema.DecodeError wrapping a parse error, a *jsonl.SyntaxError or
	// a *LineTooLongError. Entries decoded before the fault are in
	// Entries; the decoder goes on with the next line.
	Err error
}

// Decoder decodes the lines of one transcript file: it detects the format
// from the first lines (never from the path), parses every line with that
// format's parser, and hands out what each line gave, in file order.
//
// Give it the file's complete lines in order from the first one
// ([Decoder.Decode]), the over-long lines the line reader skipped in their
// place ([Decoder.TooLong]), and say when the lines available now have
// all been given ([Decoder.End]). While no line tells the format, lines
// are held (copied, at most [DetectLines] and about
// [DecoderConfig.MaxHeldBytes]); the line that decides it hands out the
// held lines and then itself. Once decided, a line is parsed and handed
// out at once, without allocating beyond what its entries need.
//
// A Decoder is not safe for concurrent use. Its callbacks must not call
// its methods.
type Decoder struct {
	cfg     DecoderConfig
	format  schema.Format
	parser  Parser
	unknown bool

	det       detector
	held      []heldLine
	arena     []byte // the held lines' bytes
	heldBytes int

	res     Result
	entries []schema.Entry
}

// heldLine is a line held while the format is undecided: its bytes are
// arena[start:end], or it is an over-long line.
type heldLine struct {
	line       jsonl.Line
	start, end int
	tooLong    *jsonl.LineTooLongError
}

// NewDecoder returns a decoder for one file. It fails only for an invalid
// configuration (see [DecoderConfig.Validate]).
func NewDecoder(cfg DecoderConfig) (*Decoder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxHeldBytes == 0 {
		cfg.MaxHeldBytes = DefaultMaxHeldBytes
	}
	return &Decoder{cfg: cfg}, nil
}

// Format returns the format of the file, or "" while it is undecided or
// when the file is not a transcript.
func (d *Decoder) Format() schema.Format { return d.format }

// Held returns how many lines are held, waiting for the format.
func (d *Decoder) Held() int { return len(d.held) }

// Reset forgets the file, for a file rewritten in place: the next line
// given is its first line again. The forced format, if any, stays. Buffers
// are kept.
func (d *Decoder) Reset() {
	d.format, d.parser, d.unknown = "", nil, false
	d.det.weak = ""
	clear(d.held)
	d.held = d.held[:0]
	d.heldBytes = 0
	if cap(d.arena) > 1<<20 {
		d.arena = nil // an idle decoder keeps no large buffer
	} else {
		d.arena = d.arena[:0]
	}
	clear(d.entries)
	d.entries = d.entries[:0]
}

// Decode gives the decoder the next complete line of the file (without
// its "\n"; blank lines may be left out). If the format is decided, the
// line is parsed and fn called with its result; if the line decides it,
// fn is called for each held line and then for this one; otherwise the
// line is held (its bytes copied) and fn not called.
//
// It returns ErrUnknownFormat once the lines have shown that the file is
// not a transcript (every later call returns it at once: stop reading the
// file), and fn's error as soon as fn returns one; the lines not handed
// out then are lost to this decoder, so Reset it and give it the file
// again from its start.
func (d *Decoder) Decode(line jsonl.Line, fn func(*Result) error) error {
	if d.parser != nil {
		entries, err := d.parser.Parse(d.entries[:0], line)
		d.entries = entries
		return d.deliver(line, entries, err, fn)
	}
	if d.unknown {
		return ErrUnknownFormat
	}
	if d.cfg.Format != "" {
		d.decide(d.cfg.Format)
		return d.Decode(line, fn)
	}
	f, strong := d.det.line(line.Bytes)
	start := len(d.arena)
	d.arena = append(d.arena, line.Bytes...)
	d.heldBytes += len(line.Bytes)
	line.Bytes = nil // the caller's buffer: not kept
	d.held = append(d.held, heldLine{line: line, start: start, end: len(d.arena)})
	if strong {
		return d.release(f, fn)
	}
	if len(d.held) >= DetectLines || d.heldBytes >= d.cfg.MaxHeldBytes {
		return d.settle(fn)
	}
	return nil
}

// TooLong gives the decoder, in its place among the lines, a line the
// line reader skipped as over-long; end is the offset just past it (the
// reader's Offset after reporting it). fn receives it, when its turn
// comes, as a Result without bytes and with a located *LineTooLongError.
// The returned error is as for [Decoder.Decode].
func (d *Decoder) TooLong(err *jsonl.LineTooLongError, end int64, fn func(*Result) error) error {
	line := jsonl.Line{Offset: err.Offset, End: end, Number: err.Line}
	if d.parser != nil {
		return d.deliverTooLong(line, err, fn)
	}
	if d.unknown {
		return ErrUnknownFormat
	}
	if d.cfg.Format != "" {
		d.decide(d.cfg.Format)
		return d.deliverTooLong(line, err, fn)
	}
	d.held = append(d.held, heldLine{line: line, tooLong: err})
	d.heldBytes += len(err.Head)
	if len(d.held) >= DetectLines || d.heldBytes >= d.cfg.MaxHeldBytes {
		return d.settle(fn)
	}
	return nil
}

// End says that every complete line available now has been given. final
// says that the file will not grow: it is static (read offline, present
// when a one-shot run started), or waiting for it to tell its format has
// lasted long enough. An undecided final file is decided from the lines
// held (a weak match, such as a headerless message line, decides) and
// the held lines handed to fn, or is not a transcript: End then returns
// ErrUnknownFormat. An undecided growing file stays undecided and keeps
// its held lines. The returned error is otherwise as for [Decoder.Decode].
func (d *Decoder) End(final bool, fn func(*Result) error) error {
	switch {
	case d.parser != nil:
		return nil
	case d.unknown:
		return ErrUnknownFormat
	case d.cfg.Format != "":
		d.decide(d.cfg.Format)
		return nil
	case !final:
		return nil
	}
	return d.settle(fn)
}

// settle decides the format from the held lines alone: a weak match, or
// not a transcript.
func (d *Decoder) settle(fn func(*Result) error) error {
	if d.det.weak != "" {
		return d.release(d.det.weak, fn)
	}
	d.unknown = true
	d.dropHeld()
	return ErrUnknownFormat
}

// release decides format f and hands out the held lines.
func (d *Decoder) release(f schema.Format, fn func(*Result) error) error {
	d.decide(f)
	defer d.dropHeld()
	for i := range d.held {
		h := &d.held[i]
		if h.tooLong != nil {
			if err := d.deliverTooLong(h.line, h.tooLong, fn); err != nil {
				return err
			}
			continue
		}
		h.line.Bytes = d.arena[h.start:h.end]
		entries, err := d.parser.Parse(d.entries[:0], h.line)
		d.entries = entries
		if err := d.deliver(h.line, entries, err, fn); err != nil {
			return err
		}
	}
	return nil
}

func (d *Decoder) dropHeld() {
	clear(d.held)
	d.held = d.held[:0]
	d.heldBytes = 0
	if cap(d.arena) > 1<<20 {
		d.arena = nil
	} else {
		d.arena = d.arena[:0]
	}
}

// decide sets the format and makes its parser.
func (d *Decoder) decide(f schema.Format) {
	p, err := NewForFile(f, d.cfg.Config)
	if p == nil {
		// Not reached: f is a valid format (detected, or validated).
		d.unknown = true
		return
	}
	if err != nil && d.cfg.OnFileError != nil {
		d.cfg.OnFileError(err)
	}
	d.format, d.parser = f, p
}

func (d *Decoder) deliver(line jsonl.Line, entries []schema.Entry, err error, fn func(*Result) error) error {
	d.res = Result{Line: line, Entries: entries, Err: err}
	return fn(&d.res)
}

func (d *Decoder) deliverTooLong(line jsonl.Line, tl *jsonl.LineTooLongError, fn func(*Result) error) error {
	err := &schema.DecodeError{
		Path: d.cfg.Path, Line: tl.Line, Offset: tl.Offset,
		Err: &LineTooLongError{Length: tl.Length, Limit: d.cfg.MaxLineBytes, Err: tl},
	}
	d.res = Result{Line: line, Err: err}
	return fn(&d.res)
}
