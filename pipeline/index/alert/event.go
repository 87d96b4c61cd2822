package alert

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sessionpipe/sessionpipe/schema"
)

// Event kinds.
const (
	KindThreshold = "threshold"      // a value went above a rule's threshold
	KindUnpriced  = "unpriced_model" // an API call used a model without a price
)

// Event is one firing of a rule for a key. Its JSON form is the message
// published on [Subject] and the payload logged.
type Event struct {
	// ID identifies the firing: a hash of the rule, the key and the
	// observation that fired it (its Seq, Part and Time), so a firing
	// repeated after a crash (the same observations replayed from before
	// the last snapshot) has the same id. Publish it as Nats-Msg-Id; the
	// webhook sends it as Idempotency-Key.
	ID          string  `json:"id"`
	Rule        string  `json:"rule"`
	Description string  `json:"description,omitempty"`
	Kind        string  `json:"kind"` // KindThreshold or KindUnpriced
	Scope       Scope   `json:"scope"`
	Metric      Metric  `json:"metric"`
	Key         string  `json:"key"`       // the scope's value: SessionKey (format/host/id), host, …; "*" for fleet
	Value       float64 `json:"value"`     // the metric's value when it fired (1 for unpriced_model)
	Threshold   float64 `json:"threshold"` // the rule's above (0 for unpriced_model)
	Window      string  `json:"window,omitempty"`
	// Time is the timestamp of the entry whose observation fired the rule
	// (the clock's time for a firing caused by a reload); FiredAt is the
	// evaluator's clock when it fired.
	Time    time.Time `json:"time"`
	FiredAt time.Time `json:"fired_at"`
	// Host, Format, SessionID and Model are those of the observation
	// that fired the rule: for a session-scope rule Format, Host and
	// SessionID are the session the key names; for other scopes they name
	// the session that pushed the value over.
	Host      string        `json:"host,omitempty"`
	Format    schema.Format `json:"format,omitempty"`
	SessionID string        `json:"session_id,omitempty"`
	Model     string        `json:"model,omitempty"`
	Seq       uint64        `json:"seq,omitempty"` // stream sequence of that observation
	// Suppressed, when set, says why the firing was recorded but not
	// sent ([Config].MaxLag: an entry too old, as when rebuilding from
	// history).
	Suppressed string `json:"suppressed,omitempty"`

	// For projected_cost_usd: the budget period, what was spent in it so
	// far and the burn rate the projection used.
	PeriodStart    *time.Time `json:"period_start,omitempty"`
	PeriodEnd      *time.Time `json:"period_end,omitempty"`
	SpentUSD       *float64   `json:"spent_usd,omitempty"`
	BurnUSDPerHour *float64   `json:"burn_usd_per_hour,omitempty"`
}

// Subject returns the subject a firing of rule is published on:
// <prefix>.alerts.<rule>. Rule names are checked to be subject tokens.
func Subject(prefix, rule string) string { return prefix + ".alerts." + rule }

// AlertsFilter returns the subject filter matching every alert:
// <prefix>.alerts.>.
func AlertsFilter(prefix string) string { return prefix + ".alerts.>" }

// eventID hashes what identifies a firing.
func eventID(rule, key string, seq uint64, part int, ts time.Time) string {
	h := sha256.New()
	var n [8]byte
	for _, s := range []string{rule, key} {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	for _, v := range []uint64{seq, uint64(part), uint64(ts.UnixNano())} {
		binary.BigEndian.PutUint64(n[:], v)
		h.Write(n[:])
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Text is the event in one line for a person, e.g.
//
//	big-session: claude-code session 3f2a… total_tokens 1,204,332 > 1,000,000 (host build-01)
func (ev *Event) Text() string {
	var b strings.Builder
	b.WriteString(ev.Rule)
	b.WriteString(": ")
	if ev.Kind == KindUnpriced {
		fmt.Fprintf(&b, "model %s has no price: its calls are counted as unpriced, not in cost_usd", ev.Key)
	} else {
		switch {
		case ev.Scope == ScopeFleet:
			b.WriteString("fleet")
		case ev.Scope == ScopeSession && ev.SessionID != "":
			b.WriteString(ev.sessionText())
		default:
			fmt.Fprintf(&b, "%s %s", ev.Scope, ev.Key)
		}
		fmt.Fprintf(&b, " %s %s > %s", ev.Metric, formatValue(ev.Metric, ev.Value), formatValue(ev.Metric, ev.Threshold))
		if ev.Window != "" {
			fmt.Fprintf(&b, " (window %s)", ev.Window)
		}
		if ev.SpentUSD != nil && ev.BurnUSDPerHour != nil && ev.PeriodEnd != nil {
			fmt.Fprintf(&b, ": spent %s, burning %s/h until %s", formatValue(MetricCostUSD, *ev.SpentUSD),
				formatValue(MetricCostUSD, *ev.BurnUSDPerHour), ev.PeriodEnd.Format(time.RFC3339))
		}
	}
	var ctx []string
	if ev.Host != "" && ev.Scope != ScopeHost {
		ctx = append(ctx, "host "+ev.Host)
	}
	if ev.SessionID != "" && ev.Scope != ScopeSession {
		ctx = append(ctx, ev.sessionText())
	}
	if len(ctx) > 0 {
		b.WriteString(" (" + strings.Join(ctx, ", ") + ")")
	}
	if ev.Description != "" {
		b.WriteString(": " + ev.Description)
	}
	return b.String()
}

// sessionText names the event's session: "claude-code session 3f2a" (the
// host is named beside it).
func (ev *Event) sessionText() string {
	if ev.Format == "" {
		return "session " + ev.SessionID
	}
	return string(ev.Format) + " session " + ev.SessionID
}

// formatValue renders a metric's value: dollars with cents, tokens with
// thousands separators.
func formatValue(m Metric, v float64) string {
	switch m {
	case MetricCostUSD, MetricProjectedCostUSD:
		return "$" + group(strconv.FormatFloat(math.Abs(v), 'f', 2, 64), v < 0)
	case MetricTokensPerMinute:
		return group(strconv.FormatFloat(math.Abs(v), 'f', 0, 64), v < 0) + "/min"
	}
	return group(strconv.FormatFloat(math.Abs(v), 'f', 0, 64), v < 0)
}

// group puts thousands separators into the integer part of a decimal.
func group(s string, neg bool) string {
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// slackBody is the webhook payload: Slack's incoming-webhook shape, which
// Mattermost, Rocket.Chat, Discord (/slack) and most chat tools accept.
type slackBody struct {
	Text   string       `json:"text"`
	Blocks []slackBlock `json:"blocks"`
}

type slackBlock struct {
	Type     string      `json:"type"`
	Text     *slackText  `json:"text,omitempty"`
	Elements []slackText `json:"elements,omitempty"`
}

type slackText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// WebhookBody returns the Slack-compatible webhook body of the event:
// {"text": ":rotating_light: " + [Event.Text], "blocks": [...]}, the
// blocks being a section with the same text (rule name in bold) and a
// context line with the rule, scope, time and event id. Tools that ignore
// blocks show the text.
func (ev *Event) WebhookBody() ([]byte, error) {
	text := ev.Text()
	facts := fmt.Sprintf("rule `%s` · scope %s · %s · id %s", ev.Rule, ev.Scope, ev.Time.UTC().Format(time.RFC3339), ev.ID)
	return json.Marshal(slackBody{
		Text: ":rotating_light: " + text,
		Blocks: []slackBlock{
			{Type: "section", Text: &slackText{Type: "mrkdwn", Text: "*" + ev.Rule + "*: " + strings.TrimPrefix(text, ev.Rule+": ")}},
			{Type: "context", Elements: []slackText{{Type: "mrkdwn", Text: facts}}},
		},
	})
}

// LogValue makes an event a group of attributes in structured logs.
func (ev Event) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("id", ev.ID), slog.String("rule", ev.Rule), slog.String("scope", string(ev.Scope)),
		slog.String("metric", string(ev.Metric)), slog.String("key", ev.Key),
		slog.Float64("value", ev.Value), slog.Float64("threshold", ev.Threshold),
	}
	if ev.Window != "" {
		attrs = append(attrs, slog.String("window", ev.Window))
	}
	if ev.Host != "" {
		attrs = append(attrs, slog.String("host", ev.Host))
	}
	if ev.Format != "" {
		attrs = append(attrs, slog.String("format", string(ev.Format)))
	}
	if ev.SessionID != "" {
		attrs = append(attrs, slog.String("session_id", ev.SessionID))
	}
	attrs = append(attrs, slog.Time("time", ev.Time))
	return slog.GroupValue(attrs...)
}
