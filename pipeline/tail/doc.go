// Package tail follows the transcript files of one host and publishes
// their normalised entries to NATS JetStream without losing or doubling
// any, whatever the files do.
//
// # Finding files
//
// Each watch is a file, a directory (every file under it, at any depth)
// or a glob ("**" for any depth). File system notifications (fsnotify)
// bring changes in milliseconds; a periodic rescan of the watches makes
// up for missed events, inotify limits and network file systems.
// Config.Poll turns notifications off, for file systems where they do not
// see every write (NFS, SMB, FUSE mounts): changes are then found by the
// rescans alone. A watch that matches nothing at start and has no
// directory to wait on is logged as a warning; /metrics counts the files
// each watch follows.
//
// A file's identity is its device and inode plus a fingerprint of its
// first kilobyte, so it is followed across renames (Fluux's /new
// archiving into sessions/, OpenClaw's .bak/.reset archives: the moved
// file is not read again), and one file seen under two names (a symbolic
// link to a watched directory inside another) is one file, followed under
// the name first seen. A file truncated, replaced at the same path, or
// rewritten (its first kilobyte, or the kilobyte before the checkpoint
// offset, changed: checked at start and whenever its size or modification
// time moved) is read again from its start. Entries keep stable keys
// (schema.Entry.Key), so what was published before a rewrite and is sent
// again is counted once by the consumers.
//
// # Reading
//
// Only complete lines are read: a half-written last line waits for its
// "\n". Each file goes through a formats.Decoder, which tells its format
// from its first lines; a file whose lines tell no format yet is waited
// for (DetectWait), unless it was present at the first scan of a static
// run (Config.Static), and files that are not transcripts are skipped and
// remembered. Files that a watch matches but whose names are not read
// (see formats.IsCandidate: not .jsonl, nor an OpenClaw archive or repair
// backup, nor sessions.json) are never opened: each is logged once and
// counted (Snapshot.SkippedNames, sessionpipe_tail_files_skipped_names), so
// no file under a watch is left out unseen. Lines longer than the limit and lines that do not decode go
// to the dead-letter subject with their location and head; the file goes
// on. A batch message larger than the connected server's max_payload is
// split, down to one line; an entry too large for a message even alone is
// shortened to fit, never in its usage or ids. File
// handles are bounded (MaxOpenFiles): past the bound the least recently
// used idle ones are closed, found from a list of the open handles, so
// that a backfill of tens of thousands of files costs the same per file
// as one of a few hundred; a closed file is reopened when it changes.
//
// # Delivery
//
// The entries of a run of consecutive complete lines of one file are
// published as one batch message (bus.BatchMsg), with the original bytes
// of the same lines when archiving, through a bus.Publisher, which never
// drops a message and blocks when JetStream is slow or down, so reading
// stops instead of buffering without bound. A batch closes at 1,024
// entries or lines, at 1 MiB of entries and original bytes, or when the
// file has nothing more to read now, so a line appended to a live session
// is published at once. The dead letters of a batch's bad lines go before
// it. Once the server has stored a batch message, its body goes back to
// bus.BatchMsg's pools (bus.ReleaseBatchMsg) for a later batch; a refused
// one is not handed back (its dead letter quotes it). A file's checkpoint
// advances only past lines whose every message
// was acknowledged, in file order (so checkpoints fall at batch ends),
// and is saved atomically every second and on stop, in a state directory
// that one tailer owns (an OS lock). After a crash the lines past the
// checkpoint are read and sent again: a batch cut as before is dropped by
// the stream's duplicate window, one cut otherwise (the file grew
// meanwhile) is stored again, and the consumers count its entries once. A
// parser needs the start of its file (a session header), so a restart
// replays each file from its start with publishing suppressed up to the
// checkpoint.
//
// # Whole-file documents
//
// A file whose name is a whole-file document's (formats.IsDocumentCandidate:
// an Amp thread, a Gemini CLI session-*.json, a Droid settings file, a
// Codebuff chat-messages.json) is
// JSON that its agent writes again whole, in place or by renaming a new
// file over it. It is read whole (at most Config.MaxDocumentBytes)
// whenever its size or modification time moved, its format told by its
// top-level shape, and only its entries whose content differs from what
// was published (a digest per entry key, DocState, kept in the checkpoint
// once acknowledged, and by path for a file replaced by a rename) are
// published, with the time they were first published with. A version that
// is not valid JSON (read half-written) is counted and read again at the
// next change.
package tail
