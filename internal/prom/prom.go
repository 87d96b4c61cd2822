// Package prom writes metrics in the Prometheus text exposition format
// (version 0.0.4), the one format every sessionpipe daemon serves on
// /metrics. It is a writer, not a registry: each component renders its
// own counters when scraped.
package prom

import (
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ContentType is the Content-Type of the text exposition format.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Type is a metric type.
type Type string

// The metric types the writer emits.
const (
	Counter Type = "counter"
	Gauge   Type = "gauge"
)

// Writer renders metric families to w. Errors are sticky: after the first
// failed write every call does nothing, and [Writer.Err] returns it.
type Writer struct {
	w   io.Writer
	n   int64
	err error
	buf []byte
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Label is one name="value" pair.
type Label struct{ Name, Value string }

// Sample is one value of a family, with its labels.
type Sample struct {
	Labels []Label
	Value  float64
}

// Family writes the HELP and TYPE lines of a family and its samples;
// samples are sorted by their labels so that the output is stable.
func (w *Writer) Family(name string, typ Type, help string, samples ...Sample) {
	if w.err != nil {
		return
	}
	b := w.buf[:0]
	b = append(b, "# HELP "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, escapeHelp(help)...)
	b = append(b, "\n# TYPE "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, typ...)
	b = append(b, '\n')
	slices.SortFunc(samples, func(x, y Sample) int { return compareLabels(x.Labels, y.Labels) })
	for _, s := range samples {
		b = append(b, name...)
		if len(s.Labels) > 0 {
			b = append(b, '{')
			for i, l := range s.Labels {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, l.Name...)
				b = append(b, `="`...)
				b = appendLabelValue(b, l.Value)
				b = append(b, '"')
			}
			b = append(b, '}')
		}
		b = append(b, ' ')
		b = appendValue(b, s.Value)
		b = append(b, '\n')
	}
	w.buf = b
	k, err := w.w.Write(b)
	w.n += int64(k)
	w.err = err
}

// Int writes a family with one unlabelled integer sample.
func (w *Writer) Int(name string, typ Type, help string, v int64) {
	w.Family(name, typ, help, Sample{Value: float64(v)})
}

// Written returns the bytes written so far.
func (w *Writer) Written() int64 { return w.n }

// Err returns the first write error.
func (w *Writer) Err() error { return w.err }

func compareLabels(x, y []Label) int {
	for i := 0; i < len(x) && i < len(y); i++ {
		if c := strings.Compare(x[i].Name, y[i].Name); c != 0 {
			return c
		}
		if c := strings.Compare(x[i].Value, y[i].Value); c != 0 {
			return c
		}
	}
	return len(x) - len(y)
}

// appendValue writes integers without an exponent, as scrapers and people
// read them best, and everything else as Go's shortest float.
func appendValue(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case v == math.Trunc(v) && math.Abs(v) < 1<<53:
		return strconv.AppendInt(b, int64(v), 10)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// appendLabelValue escapes \, " and newline, as the format requires.
func appendLabelValue(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b = append(b, `\\`...)
		case '"':
			b = append(b, `\"`...)
		case '\n':
			b = append(b, `\n`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// escapeHelp escapes \ and newline in HELP text.
func escapeHelp(s string) string {
	if !strings.ContainsAny(s, "\\\n") {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

// String renders one family, for tests and errors.
func String(name string, typ Type, help string, samples ...Sample) string {
	var sb strings.Builder
	NewWriter(&sb).Family(name, typ, help, samples...)
	return sb.String()
}
