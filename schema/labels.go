package schema

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of the labels of an entry ([Entry.Labels]).
const (
	MaxLabels          = 16  // labels per host at most
	MaxLabelKeyBytes   = 64  // bytes of a label key at most
	MaxLabelValueBytes = 128 // bytes of a label value at most
)

// ErrInvalidLabel reports a label that [ValidateLabel] rejects. It is
// wrapped with the label and the reason.
var ErrInvalidLabel = errors.New("schema: invalid label")

// ValidateLabel checks one label: a key of 1 to [MaxLabelKeyBytes] bytes
// of lower-case ASCII letters, digits, '_', '.' and '-', and a value of 1
// to [MaxLabelValueBytes] bytes of valid UTF-8 without control
// characters or commas (a comma separates labels in a list, see
// [ParseLabels]).
func ValidateLabel(key, value string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: empty key", ErrInvalidLabel)
	case len(key) > MaxLabelKeyBytes:
		return fmt.Errorf("%w: key %.16q…: longer than %d bytes", ErrInvalidLabel, key, MaxLabelKeyBytes)
	case value == "":
		return fmt.Errorf("%w: %s: empty value", ErrInvalidLabel, key)
	case len(value) > MaxLabelValueBytes:
		return fmt.Errorf("%w: %s: value longer than %d bytes", ErrInvalidLabel, key, MaxLabelValueBytes)
	case !utf8.ValidString(value):
		return fmt.Errorf("%w: %s: value is not valid UTF-8", ErrInvalidLabel, key)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return fmt.Errorf("%w: key %q: want lower-case letters, digits, '_', '.' and '-'", ErrInvalidLabel, key)
		}
	}
	if strings.ContainsFunc(value, func(r rune) bool { return r == ',' || unicode.IsControl(r) }) {
		return fmt.Errorf("%w: %s=%q: value holds a comma or a control character", ErrInvalidLabel, key, value)
	}
	return nil
}

// ValidateLabels checks a set of labels: at most [MaxLabels], each valid
// by [ValidateLabel]. The first invalid label is reported, in key order.
func ValidateLabels(m map[string]string) error {
	if len(m) > MaxLabels {
		return fmt.Errorf("%w: %d labels, at most %d", ErrInvalidLabel, len(m), MaxLabels)
	}
	var bad error
	badKey := ""
	for k, v := range m {
		if err := ValidateLabel(k, v); err != nil && (bad == nil || k < badKey) {
			bad, badKey = err, k
		}
	}
	return bad
}

// ParseLabels adds to m the labels of a comma-separated list of
// key=value pairs, as the tailer's -label flag and SESSIONPIPE_LABELS
// take them ("team=infra,cost_centre=42"); blanks around a pair are
// ignored, and so are empty pairs. A key given twice, a pair without '=',
// an invalid label ([ValidateLabel]) or more than [MaxLabels] labels in
// all is an error wrapping [ErrInvalidLabel]; m is then left partly
// filled.
func ParseLabels(m map[string]string, list string) error {
	for pair := range strings.SplitSeq(list, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			return fmt.Errorf("%w: %q: want key=value", ErrInvalidLabel, pair)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if err := ValidateLabel(k, v); err != nil {
			return err
		}
		if _, dup := m[k]; dup {
			return fmt.Errorf("%w: %s given twice", ErrInvalidLabel, k)
		}
		if len(m) >= MaxLabels {
			return fmt.Errorf("%w: more than %d labels", ErrInvalidLabel, MaxLabels)
		}
		m[k] = v
	}
	return nil
}
