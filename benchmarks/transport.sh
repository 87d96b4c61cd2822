#!/usr/bin/env bash
# Compares two builds of sessionpipe on the same corpus, interleaved, RUNS
# rounds (default 3): `sessions --json` (the offline count), `run -once
# -json` (embedded JetStream, tailer, indexer, Parquet and archive) and
# `export` (tailer and exporter over a temporary stream); wall time, CPU
# time (user+sys), peak RSS and the bytes left on disk, then the medians
# and run's CPU over sessions' CPU for each build.
#
#   benchmarks/transport.sh BEFORE_BIN AFTER_BIN CORPUS_DIR
#
# Build the two binaries from the two commits, e.g.
#   git worktree add /tmp/before <commit> && (cd /tmp/before && go build -o /tmp/before.bin ./cmd/sessionpipe)
#   go build -o /tmp/after.bin ./cmd/sessionpipe
# and generate a corpus with go -C benchmarks run ./cmd/gencorpus -format claude -size 200MB -out /abs/DIR.
set -euo pipefail
before=$1 after=$2 corpus=$3
runs=${RUNS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

measure() { # label, command... → "label wall cpu rss_kb"
	local label=$1
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
	awk -v l="$label" '{printf "%s %.2f %.2f %d", l, $1, $2+$3, $4}' "$tmp/time"
}

echo "# $(go version 2>/dev/null); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') ($(nproc) cores); $(date -u +%FT%TZ)"
echo "# corpus: $corpus, $(du -sb "$corpus" | cut -f1) bytes; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$runs"); do
	for b in before after; do
		bin=$before
		[ "$b" = after ] && bin=$after
		echo "$(measure "$b sessions" "$bin" sessions --json -q "$corpus") 0"
		d=$tmp/run-$b-$i
		echo "$(measure "$b run" "$bin" run -once -json -data-dir "$d" -http 127.0.0.1:0 "$corpus") $(du -sb "$d" | cut -f1)"
		rm -rf "$d"
		e=$tmp/export-$b-$i
		echo "$(measure "$b export" "$bin" export -q -out "$e/parquet" -archive-dir "$e/archive" "$corpus") $(du -sb "$e" | cut -f1)"
		rm -rf "$e"
	done
done | tee "$tmp/rows"
python3 - "$tmp/rows" "$(du -sb "$corpus" | cut -f1)" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
size = int(sys.argv[2])
by = {}
for b, what, wall, cpu, rss, disk in rows:
    by.setdefault((b, what), []).append((float(wall), float(cpu), int(rss) / 1024, int(disk) / size))
print(f"# medians of {len(by[('before', 'run')])}")
print(f"{'build':<7} {'command':<9} {'wall_s':>7} {'cpu_s':>7} {'rss_MB':>7} {'disk/input':>10}")
med = {}
for (b, what), v in by.items():
    m = tuple(statistics.median(x[i] for x in v) for i in range(4))
    med[(b, what)] = m
    print(f"{b:<7} {what:<9} {m[0]:7.2f} {m[1]:7.2f} {m[2]:7.0f} {m[3]:10.3f}")
for b in ("before", "after"):
    print(f"{b}: run CPU / sessions CPU = {med[(b, 'run')][1] / med[(b, 'sessions')][1]:.1f}x, "
          f"export CPU / sessions CPU = {med[(b, 'export')][1] / med[(b, 'sessions')][1]:.1f}x")
print(f"run CPU after/before = {med[('after', 'run')][1] / med[('before', 'run')][1]:.2f}, "
      f"export CPU after/before = {med[('after', 'export')][1] / med[('before', 'export')][1]:.2f}")
PY
