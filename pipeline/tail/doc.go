// Package tail follows the transcript files of one host and publishes
// their normalised entries to NATS JetStream without losing or doubling
// any, whatever the files do.
//
// # Finding files
//
// Files are selected by glob patterns ("**" for any depth). File system
// notifications (fsnotify) bring changes in milliseconds; a periodic
// rescan of the globs makes up for missed events, inotify limits and
// network file systems. Config.Poll turns notifications off, for file
// systems where they do not see every write (NFS, SMB, FUSE mounts):
// changes are then found by the rescans alone. A file's identity is its device and inode plus a
// fingerprint of its first kilobyte, so it is followed across renames
// (Fluux's /new archiving into sessions/, OpenClaw's .bak/.reset
// archives: the moved file is not read again), and a file rewritten in
// place, truncated or replaced at the same path is told apart and read
// again from its start. Entries keep stable keys (schema.Entry.Key), so
// what was published before a rewrite is dropped by the stream's
// duplicate window rather than doubled.
//
// # Reading
//
// Only complete lines are read: a half-written last line waits for its
// "\n". Each file's format is detected from its first lines; files that
// are not transcripts are skipped and remembered. Lines longer than the
// limit and lines that do not decode go to the dead-letter subject with
// their location and head; the file goes on. File handles are bounded:
// idle files are closed and reopened when they change.
//
// # Delivery
//
// Every entry is published with Nats-Msg-Id set to its key through a
// bus.Publisher, which never drops a message and blocks when JetStream is
// slow or down, so reading stops instead of buffering without bound. A
// file's checkpoint advances only past lines whose every message was
// acknowledged, in file order, and is saved atomically every second and
// on stop. After a crash the lines past the checkpoint are read and sent
// again; the stream drops those it already stored. A parser needs the
// start of its file (a session header), so a restart replays each file
// from its start with publishing suppressed up to the checkpoint.
package tail
