package alert

import (
	"errors"
	"fmt"
)

// Errors of rule files, snapshots and the webhook. A [RuleError] wraps one
// of the rule errors with the file and line it was found at.
var (
	// ErrSyntax: the rules file is not valid YAML or not of the rules shape.
	ErrSyntax = errors.New("alert: invalid rules file")
	// ErrUnknownField: a rule or the file holds a field this version does
	// not know (a typo would otherwise silently disable a limit).
	ErrUnknownField = errors.New("alert: unknown field")
	// ErrMissingField: a required field (name, scope, metric, above) is absent.
	ErrMissingField = errors.New("alert: missing field")
	// ErrInvalidName: a rule name is not a subject token of letters, digits,
	// '-' and '_'.
	ErrInvalidName = errors.New("alert: invalid rule name")
	// ErrDuplicateName: two rules of one file share a name.
	ErrDuplicateName = errors.New("alert: duplicate rule name")
	// ErrUnknownScope: the scope is none of the documented ones.
	ErrUnknownScope = errors.New("alert: unknown scope")
	// ErrUnknownMetric: the metric is none of the documented ones.
	ErrUnknownMetric = errors.New("alert: unknown metric")
	// ErrInvalidValue: a field has a value of the wrong type or out of range
	// (a negative threshold, a zero window, an unknown time zone).
	ErrInvalidValue = errors.New("alert: invalid value")
	// ErrInvalidConfig: a field of an evaluator's or a webhook's
	// configuration is out of range; always wrapped in a *ConfigError
	// naming the field. Fix the configuration; retrying cannot help.
	ErrInvalidConfig = errors.New("alert: invalid configuration")
	// ErrWindow: a window where it means nothing, or one a metric cannot use.
	ErrWindow = errors.New("alert: invalid window")
	// ErrRulesFile: the rules path is not a regular file (a FIFO, a device,
	// a directory) or is larger than [MaxRulesBytes]; it is not read. Fix
	// the path: a reload that fails so keeps the rules in force.
	ErrRulesFile = errors.New("alert: unusable rules file")

	// ErrSnapshotVersion: a snapshot written by an unknown encoding version.
	// The caller starts with empty alert state (and should say so), as it
	// would without a snapshot.
	ErrSnapshotVersion = errors.New("alert: unknown snapshot version")
	// ErrSnapshot: a snapshot that does not decode. The evaluator's state is
	// left as it was.
	ErrSnapshot = errors.New("alert: invalid snapshot")

	// ErrWebhookPermanent: the webhook answered with a status that retrying
	// cannot fix (a 4xx other than 408 and 429), or the event has no body;
	// [Webhook.Deliver] gives the event up: do not send it again.
	ErrWebhookPermanent = errors.New("alert: webhook refused the event")
)

// RuleError is an invalid rule or rules file, located in its file. Its
// message reads "path:line: rule "name": why"; Err is one of the rule
// sentinels above, wrapped with the details.
type RuleError struct {
	Path string // file name as given to [Parse] or [Load]
	Line int    // 1-based line, 0 when unknown
	Rule string // rule name, "" when unknown
	Err  error
}

func (e *RuleError) Error() string {
	loc := e.Path
	if loc == "" {
		loc = "rules"
	}
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", loc, e.Line)
	}
	if e.Rule != "" {
		return fmt.Sprintf("%s: rule %q: %v", loc, e.Rule, e.Err)
	}
	return fmt.Sprintf("%s: %v", loc, e.Err)
}

func (e *RuleError) Unwrap() error { return e.Err }
