// Package api serves an [index.Indexer] over HTTP and reads it back:
// [Handler] is the JSON API (sessions, a session with its turns, usage,
// alerts), the live events as server-sent events (from
// [index.Indexer.Subscribe]), /healthz, /metrics (the indexer's registry,
// the tokens, cost and calls by host and model, bounded, and the event
// streams) and the dashboard, one static page with its vendored chart
// library embedded (dashboard/). [Client] is the one Go client of the API:
// the indexer's query subcommands, sessionpipe top and the status line
// use it, and the answers' types ([SessionsPage], [SessionDetail],
// [UsagePage], [AlertsPage]) are those the handler writes.
//
// The listing and the cell table that make a page or a usage sum over
// 100,000 sessions fast stay in pipeline/index: they are the
// Aggregator's query indexes, kept up to date at each of its commits from
// its unexported session records.
//
// It imports pipeline/index (its queries and live feed), index/alert (the
// alert events), schema, and prometheus's client; not pebble (the state is
// the indexer's, behind pipeline/index/store).
package api
