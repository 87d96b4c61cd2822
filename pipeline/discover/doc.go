// Package discover is the one rule for which files belong to the paths a
// user named: the offline commands (formats.Walk, behind `sessions`,
// `entries`) and the tailer's watches (behind `tailer`, `run` and
// `export`) both resolve, match and walk through it, so the same
// arguments select the same files. What a file found is (a transcript, a
// session store, a document, a database) is told by its name in package
// formats and by its content; this package only says whether a path is
// named, and how.
//
// # Paths and patterns
//
// Each path given is resolved once, by [Resolve]:
//
//   - a path that exists is taken as it is, even when its name holds glob
//     characters: a directory names every file under it, at any depth
//     ([KindDir]); anything else names itself ([KindFile]);
//   - a path that does not exist and holds a glob character ([HasMeta]) is
//     a doublestar pattern ([KindGlob]): "*" and "?" within one path
//     element, "**" any number of directories, "[a-z]", "{a,b}";
//   - any other path that does not exist is a file or a directory that may
//     appear later ([KindMissing]).
//
// A file matched by a pattern is named by it ([Match.Named]); a directory
// matched by a pattern names every file under it, as a directory given
// does. Names starting with a dot are matched like any other ("*" matches
// ".x.jsonl"; a walk enters ".hidden/"), as doublestar does and unlike the
// shells.
//
// # The backslash
//
// '\' escapes the character after it in a pattern, as in doublestar and
// the POSIX shells: `a\*.jsonl` matches the file named "a*.jsonl" only,
// and `c\\d.jsonl` the file named `c\d.jsonl`. A path holding '\' is
// therefore a pattern unless a file or directory of that very name
// exists ([HasMeta] counts '\' among the glob characters), and a literal
// path is made a pattern by [QuoteMeta], which escapes '\' too. This is
// the Unix rule; '\' is never a path separator here.
//
// # Walking
//
// [Set.Walk] walks only the directories that can hold a match (the static
// base of each pattern, as deep as its rest allows, and every directory a
// pattern matched), reports regular files only, follows symbolic links to
// files, follows a link to a directory when it is a path given or the
// base of a pattern, and never inside a walk (a link to a directory met in
// a walk is neither walked nor reported: its files are found under the
// directory it leads to when that is named). It does not tell two names of
// one file apart: callers keep the first path of each identity.
package discover
