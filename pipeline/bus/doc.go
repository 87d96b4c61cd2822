// Package bus is sessionpipe's NATS JetStream layer: the subjects and the
// one stream, connections, the embedded server of laptop mode, the entry
// and dead-letter messages, and the [Publisher] the tailer publishes
// through. It does not read files or decide what to publish; consumers
// (indexer, exporter) read the stream with the jetstream package and
// [DecodeEntry].
//
// # Subjects and stream
//
// Entries go to <prefix>.entries.<host>.<format> and dead letters to
// <prefix>.dead.<host>, host and format made safe by [Token]. The default
// prefix is "sessionpipe" and the stream, "SESSIONPIPE", holds both
// subject trees ([EnsureStream]). Every message carries a Nats-Msg-Id
// header: the entry key ([schema.Entry.Key]) or, for a dead letter,
// "dead:<host>:<path>:<offset>".
//
// # Delivery guarantees
//
// [Publisher.Publish] is asynchronous with a bounded in-flight window:
// when MaxInFlight messages are out and unacknowledged, Publish blocks,
// which stops the tailer reading. Each message's done callback runs
// exactly once, in publish order, with nil once JetStream acknowledged
// it, stored or dropped as a duplicate. So the tailer can advance a
// file's checkpoint in done: everything up to that line is in the stream.
//
// A failure (no responders while the server restarts, an ack timeout, a
// disconnect, a stream leader change) is never reported and never
// dropped. The publisher stops sending new messages (Publish queues
// them), waits until every message already sent has settled, then
// re-sends every message not acknowledged, in the original order, with
// exponential backoff between rounds, until they are acknowledged or
// their context ends (done gets context.Cause). Then it resumes.
//
// Exactly once: a re-sent message whose first copy was in fact stored
// (only its ack was lost) is dropped by the stream's duplicate window
// ([StreamConfig.DuplicateWindow]) and acknowledged as a duplicate; one
// whose first copy was lost is stored now. Either way the stream holds it
// once. The same holds for the lines a restarted tailer re-reads from its
// checkpoint.
//
// Per-file order: messages of one connection reach the server in order,
// and what an outage loses is always a suffix of what was sent. Since
// nothing new is sent before the lost suffix is re-sent, the stream
// receives the messages in publish order. Two details keep that true:
// connections must not buffer publishes while reconnecting (a buffered
// message would go out after the reconnect ahead of an earlier lost one;
// [NewPublisher] refuses such a connection, [Connect] and [Embedded.Conn]
// make none), and the publisher holds new messages when the connection
// has reconnected since the unsettled ones were sent, even before it has
// seen them fail.
//
// Where it cannot hold: a re-send later than the duplicate window (a
// tailer down for longer than the window, re-reading the lines after its
// last saved checkpoint) stores those few entries a second time; and
// when the server loses a message without the connection dropping (a
// clustered stream's leader changes while messages are in flight), a
// later message sent before the loss was noticed can be stored first.
// The publisher counts such messages ([Stats].Reordered) and logs them;
// entries carry path, offset and line, so a consumer that needs strict
// order within a file can restore it.
package bus
