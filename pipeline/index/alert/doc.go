// Package alert evaluates token-spend alert rules against the API calls the
// indexer counts, and delivers their firings. It reads the rules file,
// keeps per-rule, per-key state (running totals, sliding windows, budget
// periods) that can be snapshotted and restored, and turns firings into
// events, their subject and a Slack-compatible webhook body. It has no
// NATS dependency and does no I/O but the optional [Webhook] sender: the
// indexer feeds it and publishes what it returns.
//
// # Rules file
//
// The rules file (--rules FILE) is YAML with one field, rules, a list:
//
//	rules:
//	  - name: big-session          # subject token and id
//	    scope: session             # session | host | project | model | format | fleet | label:<name>
//	    metric: total_tokens       # see the metrics below
//	    above: 1000000
//	  - name: host-hour
//	    scope: host
//	    metric: cost_usd
//	    above: 20
//	    window: 1h                 # sliding window
//	  - name: daily-budget
//	    description: the fleet's daily budget   # shown in events and messages
//	    scope: fleet
//	    metric: projected_cost_usd
//	    above: 200
//	    window: day                # the budget period
//	    timezone: Europe/Paris     # where the day starts (default UTC)
//	  - name: unpriced
//	    metric: unpriced_model
//
// Fields:
//
//	name         required. 1-64 letters, digits, '-', '_': the last token of the
//	             event subject <prefix>.alerts.<name>, and the rule's id (state is
//	             kept by name across reloads and restarts). Unique in the file.
//	description  optional free text, carried by events.
//	scope        required (but for unpriced_model): what the rule keeps one value
//	             per. session: the session, named by format, host and id
//	             ([SessionKey]: two agents or two hosts may use one id); host:
//	             the host the entry was read
//	             on; project: the session's working directory; model: the call's
//	             model; format: the source format (claude-code, codex, …); fleet:
//	             one value for everything (key "*"); label:<name>: the value of
//	             the label <name> of the call's entry, as the tailer's -label
//	             flags set it (e.g. label:team keeps one value per team;
//	             entries without the label do not count for the rule).
//	metric       required: total_tokens (input + output + cache read + cache
//	             write), input_tokens, output_tokens, cache_read_tokens,
//	             cache_write_tokens, cost_usd (priced calls only),
//	             tokens_per_minute, projected_cost_usd, unpriced_model.
//	above        required (but for unpriced_model, which has none): the
//	             threshold, a number >= 0; the rule fires when the value is
//	             strictly greater.
//	rearm_below  optional, windowed scopes only: a fired key re-arms once its value
//	             is strictly below this (hysteresis; default: above).
//	window       see Windows. Durations are Go durations (90s, 15m, 1h30m) or
//	             whole days (7d); calendar periods are day, week (from Monday) and
//	             month.
//	rate_window  projected_cost_usd only: the burn-rate window (default 1h).
//	timezone     calendar periods only: an IANA zone (default UTC).
//
// Parse rejects, with "file:line: rule "name": why", and reports every
// invalid rule of a file at once: an unknown field (a typo would silently
// disable a limit), a missing name, scope, metric or above, an unknown scope
// or metric, a duplicate name, a name that is not a subject token, a
// negative threshold, a window where it means nothing (session-scope sums,
// unpriced_model) or is missing (other scopes), a window shorter than one
// minute, a field given twice, YAML syntax errors.
//
// # Windows
//
// Session scope: the value is the session's running total since the
// evaluator first saw it, and a rule has no window; but tokens_per_minute,
// the session's rate over its window (default 5m). Every other scope is a
// windowed scope.
//
// Other scopes, sums (the token metrics and cost_usd): window is either a
// duration, a sliding window (the sum over the last hour, say), or a
// calendar period, the sum since the period started (today's spend). A
// sliding window is kept in 60 buckets of window/60 (1h: one-minute
// buckets): data leaves it a bucket at a time, so at any instant it sums
// between 59/60 of the window and the whole of it. A calendar period is one
// running sum that restarts at the period's start.
//
// tokens_per_minute: the total tokens in the sliding window (default 5m)
// divided by its length in minutes; any scope.
//
// projected_cost_usd: a budget that warns before it is spent. window is
// the budget period: day, week, month, or a duration dividing 24h (1h,
// 6h, 12h, 24h: periods aligned on midnight). The projection is
//
//	spent in the period so far + burn rate × time left in the period
//
// where the burn rate is the spend of the last rate_window (default 1h,
// sliding, across the period's start) divided by its length. Worked
// example, the daily-budget rule above (above: 200, window: day, UTC): a $1
// call every 15 minutes from midnight projects about $97 all morning
// (spent ≈ 4 × hours, burn $4/h). From noon a $4 call every 15 minutes. At
// 12:00, $52 spent, $7 in the last hour: 52 + 7 × 12 = $136. At 12:15: 56 +
// 10 × 11.75 = $173.50. At 12:30, $60 spent and $13 in the last hour (the
// 11:30 call has left it): 60 + 13 × 11.5 = $209.50 > $200: the rule
// fires at 12:30, eleven hours before the budget would be gone, with
// spent_usd 60, burn_usd_per_hour 13 and the period in the event. An hour
// without spend later the projection is what was spent: the rule re-arms.
//
// # Time
//
// Observations carry the entry's timestamp, and that is what places data
// in windows and periods and moves a key's window forward: a key's value
// is its window as of the latest timestamp observed for it. So replaying
// the same observations gives the same firings whatever the wall clock,
// and a backlog applied after an outage fires what it would have fired
// live (the event's time is the entry's, fired_at the clock's). Data older
// than a key's window or period is ignored for that rule (counted as late).
// A timestamp later than the clock counts as the clock's now (a host whose
// clock runs ahead cannot push windows into the future).
//
// An indexer that rebuilds its state from the start of the stream would so
// fire every rule that history ever crossed; [Config].MaxLag keeps
// observations older than the clock by more than it from firing (their
// keys are marked fired all the same).
//
// The clock decides only when time has passed without data:
// [Evaluator.Advance] slides every window and period to the clock's now,
// re-arms keys whose value fell and forgets empty and idle keys. Call it
// every few seconds while the indexer is caught up with the stream, and
// not while it applies a backlog (it would slide windows past data still
// to come, which then counts as late).
//
// # Firing and re-arming
//
// A rule fires once per key when its value goes strictly above the
// threshold: one [Event]. Session scope: once per session, never again for
// that session (even if a correction brings its total down). Windowed
// scopes: the key re-arms when its value falls strictly below rearm_below
// (default above) or its window empties, and can then fire again.
// unpriced_model: once per model.
//
// Keys stay bounded: windowed keys are forgotten once their window holds
// nothing; session-scope and unpriced_model keys after [Config].IdleTTL
// (default 7 days) without an observation (a session resumed later counts
// from zero again and may fire again; an unpriced model seen again fires
// again, as a reminder); and a rule never holds more than [Config].MaxKeys
// keys (default 100,000: the tenth seen least recently is evicted, counted
// and logged).
//
// # Events
//
// A firing is an [Event], published as JSON on [Subject]
// (<prefix>.alerts.<rule>):
//
//	{"id":"5c0f…","rule":"big-session","kind":"threshold","scope":"session",
//	 "metric":"total_tokens","key":"claude-code/build-01/3f2a…","value":1204332,
//	 "threshold":1000000,"time":"2026-11-23T09:59:00Z","fired_at":"2026-11-23T10:00:00Z",
//	 "host":"build-01","format":"claude-code","session_id":"3f2a…",
//	 "model":"claude-opus-4-6","seq":42}
//
// kind is "threshold" or "unpriced_model"; window is the rule's window as
// written; host, format, session_id and model are those of the call that
// fired the rule (for session scope the session the key names);
// projected_cost_usd adds
// period_start, period_end, spent_usd and burn_usd_per_hour. The id is a
// hash of the rule, the key and the observation that fired it, so a
// firing repeated after a crash has the same id: publish it as
// Nats-Msg-Id and the stream's duplicate window drops the repeat.
// [Event.WebhookBody] is the Slack incoming-webhook body ({"text": …,
// "blocks": …}); [Event.Text] the same line for logs.
//
// # Restarts
//
// [Evaluator.Snapshot] encodes every rule's keys (fired or armed, running
// totals, period sums, window buckets) and the last observation applied
// in a versioned JSON document (see [SnapshotVersion]); the indexer stores
// it beside its own state and the stream sequence it covers, and
// [Evaluator.Restore] brings it back: nothing fires again and no window
// loses data. Observations carry their stream sequence (Seq, Part); one at
// or before the last applied is skipped, so a replayed batch changes
// nothing.
//
// # Reload
//
// [Evaluator.Reload] and [Evaluator.ReloadFile] (for SIGHUP) swap the rule
// set. A rule kept by name with the same scope, metric, window, rate window
// and time zone keeps its state; if its threshold changed, its keys are
// evaluated against the new one at once (armed keys above it fire, fired
// keys of windowed scopes below it re-arm). A rule whose scope, metric or
// window changed starts empty, as a new rule does; removed rules' state is
// dropped. An invalid file changes nothing and returns the file:line
// errors. [Load] reads only a regular file of at most [MaxRulesBytes] (a
// FIFO or a device is refused, not opened for a blocking read), and
// [LoadContext] returns when its context ends, so that a reload never
// holds up a daemon's stop.
//
// # Webhook
//
// [Webhook] POSTs an event's WebhookBody with an Idempotency-Key header
// holding the event id (the same id for every attempt and after a
// restart: a receiver keeps one of each key). Transient failures (network
// errors, timeouts, 408, 429, 5xx) are retried with exponential backoff
// and jitter (1s doubling to 30s, Retry-After followed) for as long as the
// endpoint fails; other 4xx give the event up for good. The webhook keeps
// no queue: the indexer feeds it from a durable consumer of the alerts
// stream and acknowledges an event only once it was accepted or refused
// for good, so undelivered alerts survive a restart (see package index).
package alert
