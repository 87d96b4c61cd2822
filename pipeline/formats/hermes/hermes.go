package hermes

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/pipeline/formats/parse"
	"github.com/sessionpipe/sessionpipe/pipeline/jsonl"
	"github.com/sessionpipe/sessionpipe/schema"
)

// SubtypeSessionTotal is the Subtype of the entry of a session row: the
// session's totals over its API calls, not one call.
const SubtypeSessionTotal = "session_total"

// Parser turns session rows of one state.db into entries. It keeps no
// state between rows but its scanner. A Parser is not safe for concurrent
// use.
type Parser struct {
	cfg parse.Config
	s   jsonl.Scanner
}

// New returns a parser for the rows of one database; cfg.Path names it.
func New(cfg parse.Config) *Parser { return &Parser{cfg: cfg} }

// Format returns [schema.FormatHermes].
func (p *Parser) Format() schema.Format { return schema.FormatHermes }

// counter names the usage columns, in the order of their fields.
var counterNames = [...]string{"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens"}

// Parse appends the entry of one sessions row, given as a JSON object of
// its columns (see the package doc), to dst. A line that is not an
// object, a row without id, a started_at or cost that is not a number, or
// a token counter that is not an integer in 0…10¹² give a
// *schema.DecodeError (for a bad field, with the entry itself without it).
// Entries never alias line.Bytes.
func (p *Parser) Parse(dst []schema.Entry, line jsonl.Line) ([]schema.Entry, error) {
	s := &p.s
	return parse.Objects(&p.cfg, s, line, dst, func(dst []schema.Entry, obj, start int) ([]schema.Entry, error) {
		e := parse.Base(&p.cfg, schema.FormatHermes, line, obj)
		var err error
		fail := func(off int, ferr error) {
			if err == nil {
				err = parse.Fail(&p.cfg, line, off, ferr)
			}
		}
		var counts [len(counterNames)]int64
		var provider string
		var actual, estimated float64
		badUsage := false
		for s.NextField() {
			key := string(s.Key())
			off := s.Offset()
			v := s.Value()
			switch key {
			case "id":
				e.SessionID = parse.Str(v)
			case "model":
				e.Model = strings.TrimSpace(parse.Str(v))
			case "billing_provider":
				provider = parse.Str(v)
			case "parent_session_id":
				e.ParentSessionID = parse.Str(v)
			case "title":
				e.Title = parse.Str(v)
			case "cwd":
				e.CWD = parse.Str(v)
			case "started_at":
				if v.Kind() == jsonl.Null {
					continue
				}
				ts, ok := seconds(v)
				if !ok {
					fail(off, fmt.Errorf("%w: started_at", parse.ErrBadField))
					continue
				}
				e.TS = ts
			case "actual_cost_usd", "estimated_cost_usd":
				if v.Kind() == jsonl.Null {
					continue
				}
				c, ok := v.Float()
				if !ok || math.IsNaN(c) || math.IsInf(c, 0) {
					fail(off, fmt.Errorf("%w: %s", parse.ErrBadField, key))
					continue
				}
				if key == "actual_cost_usd" {
					actual = c
				} else {
					estimated = c
				}
			default:
				for i, name := range counterNames {
					if key != name {
						continue
					}
					n, ok := parse.Count(v)
					if !ok {
						fail(off, parse.CountError(v, key))
						badUsage = true
					}
					counts[i] = n
				}
			}
		}
		if serr := parse.ScanError(&p.cfg, line, s); serr != nil {
			return dst, serr
		}
		if e.SessionID == "" {
			if err == nil {
				err = parse.Fail(&p.cfg, line, start, fmt.Errorf("%w: id", parse.ErrMissingField))
			}
			return dst, err
		}
		e.EntryID = "session"
		e.Subtype = SubtypeSessionTotal
		e.Provider = normalizeProvider(provider, e.Model)
		if p.cfg.Raw {
			e.Raw = append([]byte(nil), line.Bytes[start:s.Offset()]...)
		}
		u := schema.Usage{
			Input:      counts[0],
			Output:     counts[1],
			CacheRead:  counts[2],
			CacheWrite: counts[3],
			Reasoning:  min(counts[4], counts[1]),
		}
		e.Kind = schema.KindEvent
		if e.Model != "" && !badUsage && (u.Total() > 0 || actual > 0 || estimated > 0) {
			e.Kind, e.Role, e.Meta = schema.KindMessage, schema.RoleAssistant, true
			if u.Total() > 0 {
				e.Usage = &u
				e.UsageKey = "hermes:" + e.SessionID
			}
			switch {
			case actual > 0:
				e.CostUSD = &actual
			case estimated > 0:
				e.CostUSD = &estimated
			}
		}
		return append(dst, e), err
	})
}

// seconds decodes a Unix time in seconds (a real; from 10¹² up,
// milliseconds).
func seconds(v jsonl.Value) (time.Time, bool) {
	f, ok := v.Float()
	if !ok || f <= 0 || math.IsInf(f, 0) {
		return time.Time{}, false
	}
	if f >= 1e12 {
		f /= 1000
	}
	if f > 253402300799 {
		return time.Time{}, false
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(math.Round(frac*1e3))*1e6).UTC(), true
}

// normalizeProvider names the provider as ccusage does: Hermes's billing
// provider in lower case ('-' read as '_'), its aliases folded; without
// one, from the model's name ("" when it tells nothing).
func normalizeProvider(p, model string) string {
	p = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(p)), "-", "_")
	switch p {
	case "":
	case "anthropic", "claude":
		return "anthropic"
	case "openai", "openai_codex":
		return "openai"
	case "google", "google_ai", "gemini", "vertex", "vertex_ai":
		return "google"
	default:
		return p
	}
	m := strings.ToLower(model)
	switch {
	case strings.HasPrefix(m, "claude-"), strings.HasPrefix(m, "claude/"):
		return "anthropic"
	case strings.HasPrefix(m, "gpt"), strings.HasPrefix(m, "chatgpt"),
		len(m) > 1 && m[0] == 'o' && m[1] >= '0' && m[1] <= '9':
		return "openai"
	case strings.HasPrefix(m, "gemini-"), strings.HasPrefix(m, "gemini/"):
		return "google"
	}
	return ""
}
