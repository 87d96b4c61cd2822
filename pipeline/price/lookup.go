package price

import (
	"bytes"
	"strings"
	"time"
)

// synthetic is the model name Claude Code writes on messages it makes up
// itself (local errors, interruptions). They are not model calls.
const synthetic = "<synthetic>"

// maxName bounds the names Lookup normalises; longer names match only
// exactly.
const maxName = 256

// Lookup returns the price of model. It tries, in order, and stops at the
// first match:
//
//  1. "<synthetic>" and "" are never priced (ok=false).
//  2. The name as written, exactly.
//  3. Its normalised spelling against the keys spelled the same way:
//     ASCII upper case folded; a trailing bracket suffix removed (Claude
//     Code's "claude-sonnet-4-5[1m]" 1M-context marker); leading provider
//     paths "anthropic/", "openai/", "bedrock/", "vertex_ai/" and
//     "openrouter/" removed, repeatedly; '.' and '@' read as '-'
//     ("claude-sonnet-4.5", Vertex's "claude-sonnet-4-5@20250929"). A
//     spelling two keys share names neither.
//  4. ccusage's alias "gpt-5.3-spark" for "gpt-5.3-codex-spark"; a Grok
//     Build harness name "grok-…-build" ("grok-4.5-build", the billed
//     name the Grok Build CLI records) as the model without "-build", as
//     ccusage prices it.
//  5. The normalised name without a trailing release date, -YYYYMMDD or
//     -YYYY-MM-DD ("claude-haiku-4-5-20991231" is priced as
//     "claude-haiku-4-5").
//  6. For Bedrock ids ("<region>.anthropic.claude-…-v1:0"): without the
//     ":N" revision, then without the region (the global
//     "anthropic.claude-…" row), then the bare Claude model without
//     "anthropic." and the "-vN" suffix, and without its date.
//
// ccusage instead matches any key that contains the name or that the name
// contains and picks the longest; the rules above give the same price on
// every name in the shipped samples and on the usual spellings, and
// differ where the longest key is a different product (README.md lists
// the cases). Lookup does not allocate, except the first time it sees a
// name that is not a key.
//
// The steps run over the LiteLLM rows (with the overrides of them and the
// models only an override file has) first, and only when none matches
// over the models.dev rows: a name the LiteLLM rows price in any
// spelling keeps that price. Lookup returns the model's base price; see
// [Table.LookupAt] for the price at a time.
func (t *Table) Lookup(model string) (Price, bool) {
	e := t.find(model)
	if e == nil {
		return Price{}, false
	}
	return e.base, true
}

// LookupAt returns the price of model at the time ts: the price of the
// dated period of its row that holds ts, else its base price (also for a
// zero ts). Names resolve as for [Table.Lookup].
func (t *Table) LookupAt(model string, ts time.Time) (Price, bool) {
	e := t.find(model)
	if e == nil {
		return Price{}, false
	}
	return *e.at(ts), true
}

// maxCached bounds how many distinct non-exact names a table remembers,
// so that a stream of garbage names cannot grow it without end.
const maxCached = 4096

// find implements Lookup without copying the price. Names that are not
// keys are resolved once and remembered.
func (t *Table) find(model string) *entry {
	if model == "" || model == synthetic {
		return nil
	}
	if p := t.layers[layerLiteLLM].prices[model]; p != nil {
		return p
	}
	if v, ok := t.cache.Load(model); ok {
		return v.(*entry)
	}
	var p *entry
	for i := range t.layers {
		if p = t.layers[i].resolve(model); p != nil {
			break
		}
	}
	if t.cached.Load() < maxCached && t.cached.Add(1) <= maxCached {
		t.cache.Store(strings.Clone(model), p) // not a view of the caller's buffer
	}
	return p
}

// resolve applies the steps of Lookup to the rows of one layer.
func (t *layer) resolve(model string) *entry {
	if p := t.prices[model]; p != nil {
		return p
	}
	var buf [maxName]byte
	n, ok := normalize(buf[:0], model)
	if !ok {
		return nil
	}
	if p := t.norm[string(n)]; p != nil {
		return p
	}
	if string(n) == "gpt-5-3-spark" {
		if p := t.prices["gpt-5.3-codex-spark"]; p != nil {
			return p
		}
	}
	if hasPrefix(n, "grok-") && bytes.HasSuffix(n, []byte("-build")) {
		if p := t.norm[string(n[:len(n)-len("-build")])]; p != nil {
			return p
		}
	}
	if d := stripDate(n); len(d) != len(n) {
		if p := t.norm[string(d)]; p != nil {
			return p
		}
	}
	return t.bedrock(n)
}

// bedrock tries the Bedrock forms of the normalised name n (step 6).
func (t *layer) bedrock(n []byte) *entry {
	const marker = "anthropic-"
	i := anthropicAt(n)
	if i < 0 {
		return nil
	}
	rev := n // n without its ":N" revision
	if j := bytes.LastIndexByte(n, ':'); j > i && allDigits(n[j+1:]) {
		rev = n[:j]
		if p := t.norm[string(rev)]; p != nil {
			return p
		}
	}
	if i > 0 {
		if p := t.norm[string(n[i:])]; p != nil {
			return p
		}
		if p := t.norm[string(rev[i:])]; p != nil {
			return p
		}
	}
	bare := stripVersion(rev[i+len(marker):])
	if p := t.norm[string(bare)]; p != nil {
		return p
	}
	if d := stripDate(bare); len(d) != len(bare) {
		return t.norm[string(d)]
	}
	return nil
}

// anthropicAt returns where "anthropic-claude-" starts in n when n is a
// Bedrock id, optionally behind a region ("us-", "apac-"), or -1.
func anthropicAt(n []byte) int {
	const id = "anthropic-claude-"
	if len(n) >= len(id) && string(n[:len(id)]) == id {
		return 0
	}
	j := 0
	for j < len(n) && n[j] >= 'a' && n[j] <= 'z' {
		j++
	}
	if j == 0 || j >= len(n) || n[j] != '-' {
		return -1
	}
	if rest := n[j+1:]; len(rest) >= len(id) && string(rest[:len(id)]) == id {
		return j + 1
	}
	return -1
}

// normalize appends the normalised spelling of name (step 3) to dst and
// returns the part that remains after the prefixes are removed. ok is
// false for names longer than maxName.
func normalize(dst []byte, name string) (n []byte, ok bool) {
	if len(name) > maxName {
		return nil, false
	}
	n = append(dst, name...)
	for i, c := range n {
		switch {
		case c >= 'A' && c <= 'Z':
			n[i] = c + 'a' - 'A'
		case c == '.' || c == '@':
			n[i] = '-'
		}
	}
	if len(n) > 0 && n[len(n)-1] == ']' {
		if i := bytes.LastIndexByte(n, '['); i > 0 {
			n = n[:i]
		}
	}
	for bytes.IndexByte(n, '/') > 0 {
		switch {
		case hasPrefix(n, "anthropic/"):
			n = n[len("anthropic/"):]
		case hasPrefix(n, "openai/"):
			n = n[len("openai/"):]
		case hasPrefix(n, "bedrock/"):
			n = n[len("bedrock/"):]
		case hasPrefix(n, "vertex_ai/"):
			n = n[len("vertex_ai/"):]
		case hasPrefix(n, "openrouter/"):
			n = n[len("openrouter/"):]
		default:
			return n, true
		}
	}
	return n, true
}

// hasPrefix reports whether n starts with p and goes on after it.
func hasPrefix(n []byte, p string) bool {
	return len(n) > len(p) && string(n[:len(p)]) == p
}

// stripDate removes a trailing -YYYYMMDD or -YYYY-MM-DD.
func stripDate(n []byte) []byte {
	if k := len(n) - 9; k > 0 && n[k] == '-' && allDigits(n[k+1:]) {
		return n[:k]
	}
	if k := len(n) - 11; k > 0 && n[k] == '-' && allDigits(n[k+1:k+5]) &&
		n[k+5] == '-' && allDigits(n[k+6:k+8]) && n[k+8] == '-' && allDigits(n[k+9:]) {
		return n[:k]
	}
	return n
}

// stripVersion removes a trailing Bedrock "-vN".
func stripVersion(n []byte) []byte {
	i := bytes.LastIndexByte(n, '-')
	if i > 0 && len(n) > i+2 && n[i+1] == 'v' && allDigits(n[i+2:]) {
		return n[:i]
	}
	return n
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}
