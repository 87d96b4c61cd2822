// Package bus is sessionpipe's NATS JetStream layer: the subjects and the
// one stream, connections, the embedded server of laptop mode, the entry
// and dead-letter messages, the [Publisher] the tailer publishes
// through, the [Consumer] the indexer and the exporter read through, the
// [Lease] that keeps one of them active per role, and the stream's
// [StreamIdentity]. It does not read files or decide what to publish,
// and it does not apply entries.
//
// # Subjects and stream
//
// Entries go to <prefix>.entries.<host>.<format>, the original lines to
// <prefix>.raw.<host> and dead letters to <prefix>.dead.<host>, host and
// format made safe by [Token]. The default prefix is "sessionpipe" and
// the stream, "SESSIONPIPE", holds the three subject trees
// ([EnsureStream]).
//
// # Messages
//
// The tailer publishes the entries of a run of consecutive lines of one
// file as one batch message ([BatchMsg], Sessionpipe-Schema 2): an S2
// block of the entries' JSON lines. Headers name the entry count and the
// span of lines (file identity, bytes, lines); the Nats-Msg-Id is
// "batch:<host>:<file>:<offset>-<end>:<hash of the content>". When the
// transcripts are archived, the same lines' original bytes follow as a
// raw chunk message on <prefix>.raw.<host> ([RawMsgs]: the chunk's fields
// as a JSON line, then an S2 block; Nats-Msg-Id
// "raw:<host>:<file>:<offset>-<end>:<hash of the bytes>"), which the
// exporter may purge once archived. Batches written by earlier versions
// carry the original bytes as a second block of their body
// ([BatchDecoder.Raw]); consumers read both. A line too large for a batch
// message travels as before batches (Sessionpipe-Schema 1): one message
// per entry, Nats-Msg-Id the entry key ([schema.Entry.Key]), shortened to
// fit ([FitEntryMsg]), then its original bytes as raw chunk parts.
// Dead letters are messages of their own ([DeadMsg], Nats-Msg-Id
// "dead:<host>:<path>:<offset>"). The consumers read all of these, so a
// stream written by an earlier sessionpipe keeps working. [DecodeEntries]
// reads any entry message from another program.
//
// A batch re-sent with the same lines and content (an acknowledgement
// lost, a restart from the same checkpoint) has the same id and the
// stream's duplicate window drops it. A batch read again and cut
// otherwise (a crash between publish and checkpoint while the file grew,
// a lost checkpoint, a file rewritten) has another id and is stored
// again: the stream may hold an entry more than once, and the consumers
// count each entry key once (the indexer by its facts, the exporter's
// views and compaction by key). A raw chunk sent again is archived again,
// and restore rebuilds each file by line numbers: a second copy changes
// nothing. Two files holding the same record (a
// resumed session's copy) both reach the consumers, whose attribution
// rules decide; the stream never chooses by arrival.
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
//
// # Consuming
//
// [Consumer] reads one durable JetStream pull consumer, filtered to the
// entry subjects (or, with [ConsumerConfig.DeadLetters], to the
// dead-letter subjects, under another name), and hands the handler
// [Batch]es: consecutive messages in stream order with their first and
// last stream sequence, each entry decoded with its sequence, subject and
// delivery count. What it guarantees:
//
//   - At least once, in order. Every message of the filter from the start
//     position on reaches the handler, in stream order, unless it left the
//     stream first (a gap, below). A batch is acknowledged only after the
//     handler returned nil: the consumer uses AckAll and acknowledges the
//     batch's last message, waiting for the server's confirmation. A
//     process that dies before that gets the batch again.
//   - A handler error means no acknowledgement: the consumer calls the
//     handler again with the same batch (same range, same entries, from
//     memory) after a backoff, marked redelivered with [Batch.Attempt]
//     counting; no later message is handed over before it succeeds. An
//     error wrapping [ErrStopConsuming] ends [Consumer.Run] instead.
//   - Undecodable messages (another schema version, a body that is not an
//     entry) never block the stream: they are listed in the batch as
//     *[MessageError] with sequence and subject, counted, logged
//     (rate-limited), and acknowledged with it.
//   - Start position: [ConsumerConfig.StartSeq] is the caller's, from its
//     own state (the last sequence applied plus one); the durable
//     consumer is reset to it whatever position it had (the caller's state
//     is the truth; see below). Zero resumes after the durable's last
//     acknowledgement.
//   - Gaps: messages that aged out of the stream (or were purged) before
//     they were consumed, at the start or while the consumer was behind,
//     are reported once as a *[Gap] (first missing, first available) on
//     the next batch; the caller decides to rebuild or to accept the loss.
//     A start position beyond the stream's end fails with [ErrStartAhead]:
//     the state belongs to another stream (see [CheckIdentity]).
//   - Flow control: a pull request asks for at most MaxBatch messages (and
//     MaxBatchBytes, on a stream of one replica), and the server stops at
//     MaxAckPending unacknowledged,
//     so a consumer that falls behind holds about one pull request's worth
//     plus the batch being applied. [Batch.Pending] and
//     [ConsumerStats].Pending give the lag (messages of the filter not yet
//     received); AckedSeq the position.
//   - Disconnects and server restarts are ridden out: after a reconnect, a
//     failed pull request or a delivery sequence that skips one (a
//     delivery lost on the way), the consumer resets the durable consumer
//     to the sequence after the last one it took, so nothing is skipped
//     and nothing arrives out of order. Copies of messages already taken
//     (the server redelivers after AckWait while a handler is slow) are
//     dropped.
//
// Resetting the durable consumer to the caller's position is safe because
// only one process runs a durable consumer at a time (hold a [Lease] for
// its role) and the caller's state, saved with the last sequence it
// applied, says what is applied; whatever the server remembered
// (acknowledgements past it, deliveries not yet acknowledged) is
// superseded. A reset is one API call (nats-server 2.15 has it); a server that
// refuses it gets the consumer deleted and created at the sequence.
//
// Exactly-once effects are the caller's job: the consumer delivers at
// least once. The indexer applies entries idempotently by entry key and
// saves the last sequence applied with its state, so a batch applied
// again after a crash changes nothing; the exporter names files by their
// sequence range, so a batch written again replaces the same file.
//
// # Leases and stream identity
//
// A [Lease] is held by one process per role, renewed in the background,
// and lost (the holder's context cancelled) a fifth of its TTL before
// anyone else can take it; a stand-by waiting in [Lease.Acquire] takes
// over as soon as the holder releases it or its key expires.
// [StreamIdentity] (name, creation time, cluster) tells a state built
// from this stream from one built from a stream since deleted and
// recreated, whose sequences mean something else.
//
// # Stages
//
// A [Stage] is the daemon both consumers of the stream (the indexer and
// the exporter) run on: the lease on their durable consumer
// ([Stage.Run]), the wait for the stream and the identity check
// ([Stage.WaitStream]), the consumer beside its commit ticker
// ([Stage.Consume]), and the count of forged messages and gaps
// ([Stage.Matches], [Stage.NoteGap]). What is theirs is how a batch is
// applied and committed.
package bus
