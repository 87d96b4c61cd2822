// Package ccusage runs the incumbent usage tool, ccusage [Version], side by
// side with sessionpipe so that tests and benchmarks can compare per-session
// token and cost totals. It is a test helper: it installs the npm package
// into a cache directory, lays transcript files out the way each ccusage
// report expects, runs the native binary offline in an empty home, and
// decodes its JSON. It does not judge the numbers; callers compare them.
//
// # Install
//
// [Binary] (and [Install], which it wraps) runs
//
//	npm install --prefix DIR --no-audit --no-fund ccusage@20.0.24
//
// once per cache directory DIR (see [CacheDir]), under an exclusive lock on
// DIR/.install.lock shared with scripts/ccusage.sh, then finds the native
// binary under node_modules/@ccusage/ccusage-<os>-<arch>/bin/, sets its run
// bit and checks that --version prints "ccusage 20.0.24". A missing npm, a
// failed install or a wrong version fails the test with a message that says
// what to do; nothing is skipped.
//
// # Running
//
// [Run] starts "ccusage <kind> session --json --offline --timezone UTC" with
// an environment that holds only PATH, HOME (an empty directory, also the
// working directory, so no config file is discovered), TZ, NO_COLOR and the
// one variable that points the report at the root: CLAUDE_CONFIG_DIR,
// CODEX_HOME, PI_AGENT_DIR, OPENCLAW_DIR, COPILOT_HOME, GROK_HOME or CODEBUFF_DATA_DIR (see [Kind]). With --offline
// ccusage prices from the LiteLLM table compiled into the binary and makes
// no network request.
//
// # Layout
//
// [Layout] copies transcript files into a fresh root in the directory shape
// each report scans: projects/<project>/<session>.jsonl for Claude Code,
// sessions/... for Codex, sessions/<project>/<file>.jsonl for pi and
// agents/<agent>/sessions/<file>.jsonl for OpenClaw. ccusage derives its
// session identifiers from these paths (see [Session.ID]).
package ccusage
