#!/usr/bin/env bash
# Runs the tailer benchmarks (pipeline/tail/bench_test.go) and summarises
# them with benchstat. Usage, from anywhere in the repository:
#
#   benchmarks/tail/run.sh [OUTDIR]     # default OUTDIR: benchmarks/tail
#   SIZE=64MB COUNT=3 IDLE_COUNT=1 EXTRA='-bench.idle=5s' benchmarks/tail/run.sh /tmp/quick
#
# ONLY limits the run to some of backfill, periodic, latency and idle
# (the summary still covers every OUTDIR/*.txt of the four; ONLY=summary
# runs nothing and rewrites the summary).
# EXTRA holds more flags for the test binary (see the flags at the top of
# pipeline/tail/bench_test.go: -bench.files, -bench.idle, -bench.latency,
# -bench.rate, -bench.dir).
#
# Writes OUTDIR/backfill.txt, periodic.txt, idle.txt and latency.txt (raw
# `go test -bench` output) and OUTDIR/summary.txt (benchstat medians with
# 95% confidence intervals where there are 6 samples or more). With the
# defaults (SIZE=1GB, COUNT=6, IDLE_COUNT=3) it takes about 50 minutes on
# 2 cores. The generated corpus tree (1.1 GB for SIZE=1GB) is cached in
# $TMPDIR/sessionpipe-bench and reused by later runs; the JetStream stores
# of the runs are removed as they end.
set -euo pipefail

cd "$(dirname "$0")/../.."
out=${1:-benchmarks/tail}
size=${SIZE:-1GB}
count=${COUNT:-6}
idle_count=${IDLE_COUNT:-3}
benchstat=${BENCHSTAT:-go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da}
pkg=./pipeline/tail
read -r -a extra <<<"${EXTRA:-}"

mkdir -p "$out"
header() {
	echo "# $(go version)"
	echo "# CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') ($(nproc) cores)"
	echo "# $(date -u +%Y-%m-%dT%H:%MZ), load average $(cut -d' ' -f1-3 /proc/loadavg), $*"
}
run() {
	local name=$1
	shift
	[[ " ${ONLY:-backfill periodic latency idle} " == *" $name "* ]] || return 0
	header "$@" >"$out/$name.txt"
	go test -run='^$' "$@" | tee -a "$out/$name.txt"
}

# Backfill interleaves its impls in rounds (-bench.rounds) rather than
# repeating each one (-count), so that they share the machine's load.
run backfill -bench='^BenchmarkBackfill$' -benchtime=1x -count=1 -timeout=3h "$pkg" -args -bench.size="$size" -bench.rounds="$count" "${extra[@]}"
run periodic -bench='^Benchmark(Rescan|CheckpointSave)$' -count="$count" -timeout=1h "$pkg" -args "${extra[@]}"
run latency -bench='^BenchmarkAppendLatency$' -benchtime=1x -count="$count" -timeout=3h "$pkg" -args "${extra[@]}"
run idle -bench='^BenchmarkIdleCPU$' -benchtime=1x -count="$idle_count" -timeout=3h "$pkg" -args "${extra[@]}"

for f in backfill periodic latency idle; do
	[[ -f "$out/$f.txt" ]] || continue
	echo "## $f"
	# Rounds repeat sub-benchmark names, which go test suffixes #01, #02...
	sed -E 's/#[0-9]+-([0-9]+[[:space:]])/-\1/' "$out/$f.txt" >"$out/.$f.benchstat.txt"
	$benchstat "$f=$out/.$f.benchstat.txt"
	rm "$out/.$f.benchstat.txt"
	echo
done | tee "$out/summary.txt"
