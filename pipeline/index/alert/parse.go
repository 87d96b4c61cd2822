package alert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"go.yaml.in/yaml/v3"
)

// MaxRulesBytes bounds the size of a rules file [Load] reads.
const MaxRulesBytes = 4 << 20

// Load reads and parses the rules file at path (see [Parse]). Only a
// regular file of at most [MaxRulesBytes] is read: a FIFO, a device or a
// directory (checked on the file opened non-blocking, so that a FIFO
// cannot hang the open) and a larger file fail with [ErrRulesFile].
// A daemon reloading on a signal uses [LoadContext].
func Load(path string) ([]Rule, error) {
	return load(context.Background(), path, readRules)
}

// LoadContext is [Load] that returns when ctx ends, with its cause,
// whatever the read is doing: a read blocked in the kernel (a hung network
// file system) is left to end in the background, and its result dropped.
func LoadContext(ctx context.Context, path string) ([]Rule, error) {
	return load(ctx, path, readRules)
}

// load is [Load] reading the file with read.
func load(ctx context.Context, path string, read func(string) ([]byte, error)) ([]Rule, error) {
	type result struct {
		rules []Rule
		err   error
	}
	done := make(chan result, 1) // the goroutine never blocks on it
	go func() {
		data, err := read(path)
		if err != nil {
			done <- result{err: fmt.Errorf("read rules: %w", err)}
			return
		}
		rules, err := Parse(path, data)
		done <- result{rules, err}
	}()
	select {
	case r := <-done:
		return r.rules, r.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// readRules reads the regular file at path, of at most MaxRulesBytes.
func readRules(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file (%s)", ErrRulesFile, path, info.Mode().Type())
	}
	tooLarge := func(size int64) error {
		return fmt.Errorf("%w: %s has %d bytes or more, past the limit of %d (%d MiB)", ErrRulesFile, path, size, MaxRulesBytes, MaxRulesBytes>>20)
	}
	if info.Size() > MaxRulesBytes {
		return nil, tooLarge(info.Size())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxRulesBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxRulesBytes {
		return nil, tooLarge(int64(len(data))) // it grew while read
	}
	return data, nil
}

// Parse reads a rules file: a YAML mapping whose only field, rules, is a
// list of rules (see the package documentation). path is used in error
// messages only. It is a pure function of its input.
//
// Every invalid rule is reported, not only the first: the error is one
// [*RuleError] or several joined with [errors.Join], each reading
// "path:line: rule "name": why". No rule of an invalid file is returned.
// An empty file, or an empty list, is no rules.
func Parse(path string, data []byte) ([]Rule, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxError(path, data, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, syntaxError(path, data, err)
		}
		return nil, &RuleError{Path: path, Line: extra.Line, Err: fmt.Errorf("%w: a second YAML document (want one)", ErrSyntax)}
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, &RuleError{Path: path, Line: root.Line, Err: fmt.Errorf("%w: want a mapping with a rules list", ErrSyntax)}
	}
	var (
		list *yaml.Node
		errs []error
	)
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "rules" {
			errs = append(errs, &RuleError{Path: path, Line: k.Line, Err: fmt.Errorf("%w: %q (the file holds one field, rules)", ErrUnknownField, k.Value)})
			continue
		}
		list = v
	}
	if list == nil || list.Kind == yaml.ScalarNode && list.Tag == "!!null" {
		return nil, errors.Join(errs...)
	}
	if list.Kind != yaml.SequenceNode {
		errs = append(errs, &RuleError{Path: path, Line: list.Line, Err: fmt.Errorf("%w: rules: want a list of rules", ErrSyntax)})
		return nil, errors.Join(errs...)
	}
	rules := make([]Rule, 0, len(list.Content))
	names := make(map[string]int)
	for _, n := range list.Content {
		r, err := parseRule(path, n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if first, ok := names[r.Name]; ok {
			errs = append(errs, &RuleError{Path: path, Line: r.Line, Rule: r.Name, Err: fmt.Errorf("%w: also at line %d", ErrDuplicateName, first)})
			continue
		}
		names[r.Name] = r.Line
		rules = append(rules, r)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return rules, nil
}

// parseRule reads one rule mapping and checks it.
func parseRule(path string, n *yaml.Node) (Rule, error) {
	r := Rule{Line: n.Line}
	if n.Kind != yaml.MappingNode {
		return r, &RuleError{Path: path, Line: n.Line, Err: fmt.Errorf("%w: a rule is a mapping of fields", ErrSyntax)}
	}
	lines := make(map[string]int)
	// The name first, so that every other error can name the rule.
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k, v := n.Content[i], n.Content[i+1]; k.Value == "name" && v.Kind == yaml.ScalarNode {
			r.Name = v.Value
		}
	}
	fail := func(line int, err error) (Rule, error) {
		return r, &RuleError{Path: path, Line: line, Rule: r.Name, Err: err}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if prev, ok := lines[k.Value]; ok {
			return fail(k.Line, fmt.Errorf("%w: field %s given twice (also at line %d)", ErrSyntax, k.Value, prev))
		}
		lines[k.Value] = k.Line
		if v.Kind != yaml.ScalarNode {
			return fail(v.Line, fmt.Errorf("%w: %s: want a single value", ErrInvalidValue, k.Value))
		}
		var err error
		switch k.Value {
		case "name":
			// read above
		case "description":
			r.Description = v.Value
		case "scope":
			r.Scope = Scope(v.Value)
		case "metric":
			r.Metric = Metric(v.Value)
		case "above":
			r.Above, err = number(k.Value, v)
		case "rearm_below":
			r.RearmBelow, err = number(k.Value, v)
		case "window":
			r.Window, err = ParseWindow(v.Value)
		case "rate_window":
			r.RateWindow, err = parseDuration("rate_window", v.Value)
		case "timezone":
			r.Location, err = time.LoadLocation(v.Value)
			if err != nil {
				err = fmt.Errorf("%w: timezone %q: %v", ErrInvalidValue, v.Value, err)
			}
		default:
			err = fmt.Errorf("%w: %q (known: name, description, scope, metric, above, rearm_below, window, rate_window, timezone)", ErrUnknownField, k.Value)
			return fail(k.Line, err)
		}
		if err != nil {
			return fail(v.Line, err)
		}
	}
	field, err := r.normalize()
	if err != nil {
		line, ok := lines[field]
		if !ok {
			line = n.Line
		}
		return fail(line, err)
	}
	if _, ok := lines["above"]; !ok && r.Metric != MetricUnpricedModel {
		return fail(n.Line, fmt.Errorf("%w: above", ErrMissingField))
	}
	return r, nil
}

// number reads a YAML scalar as a float64.
func number(field string, v *yaml.Node) (float64, error) {
	var f float64
	if v.Tag != "!!int" && v.Tag != "!!float" {
		return 0, fmt.Errorf("%w: %s %q: want a number", ErrInvalidValue, field, v.Value)
	}
	if err := v.Decode(&f); err != nil {
		return 0, fmt.Errorf("%w: %s %q: want a number", ErrInvalidValue, field, v.Value)
	}
	return f, nil
}

// syntaxError locates a YAML syntax error. The YAML library reports the
// line where the enclosing block starts (and counts it from 0 or 1
// depending on the error), so the line is found by parsing ever longer
// prefixes of the file: the first that fails ends at the offending line.
// Files over maxSyntaxScan lines keep the library's own message.
func syntaxError(path string, data []byte, err error) error {
	line, what := 0, strings.TrimPrefix(err.Error(), "yaml: ")
	if n := bytes.Count(data, []byte("\n")); n <= maxSyntaxScan {
		end := 0
		for l := 1; end < len(data); l++ {
			next := bytes.IndexByte(data[end:], '\n')
			if next < 0 {
				end = len(data)
			} else {
				end += next + 1
			}
			var n yaml.Node
			if perr := yaml.Unmarshal(data[:end], &n); perr != nil {
				line = l
				what = perr.Error()
				break
			}
		}
	}
	if rest, ok := strings.CutPrefix(what, "yaml: line "); ok {
		if _, after, found := strings.Cut(rest, ": "); found {
			what = after
		}
	} else {
		what = strings.TrimPrefix(what, "yaml: ")
	}
	return &RuleError{Path: path, Line: line, Err: fmt.Errorf("%w: %s", ErrSyntax, what)}
}

// maxSyntaxScan bounds the file size (in lines) for which syntax errors
// are located by re-parsing prefixes.
const maxSyntaxScan = 2000
