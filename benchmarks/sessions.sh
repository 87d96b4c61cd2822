#!/usr/bin/env bash
# Compares `sessionpipe sessions` with ccusage 20.0.24 on the same
# generated Claude Code corpus, in one run, interleaved: wall time, CPU time
# (user+sys), throughput per CPU-second and peak RSS (/usr/bin/time -v),
# median of RUNS runs each, and checks that both report the same totals.
#
#   benchmarks/sessions.sh [SIZE]        # default 1GB; RUNS=5 by default
#
# The corpus is generated once under ${CORPUS_DIR:-$TMPDIR/sessionpipe-bench}.
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-1GB}
runs=${RUNS:-5}
base=${CORPUS_DIR:-${TMPDIR:-/tmp}/sessionpipe-bench}
corpus=$base/claude-$size
bin=$base/bin
mkdir -p "$bin"
bin=$(cd "$bin" && pwd) # go -C benchmarks resolves -o there

go build -o "$bin/sessionpipe" ./cmd/sessionpipe
go -C benchmarks build -o "$bin/gencorpus" ./cmd/gencorpus # benchmarks/ is a module of its own
if [ ! -d "$corpus/claude/projects" ]; then
	"$bin/gencorpus" -format claude -size "$size" -out "$corpus" -seed 1
fi
ccusage=$(scripts/ccusage.sh path | tail -1)
bytes=$(du -sb "$corpus" | cut -f1)
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT

measure() { # name, command... → prints "wall cpu rss_kb"
	local name=$1 out=$home/time.txt
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$out" "$@" >"$home/$name.json" 2>/dev/null
	awk '{printf "%.3f %.3f %d\n", $1, $2+$3, $4}' "$out"
}
sp=("$bin/sessionpipe" sessions --json -q "$corpus")
cc=(env -i PATH=/usr/bin:/bin HOME="$home" TZ=UTC CLAUDE_CONFIG_DIR="$corpus/claude" "$ccusage" claude session --json --offline --timezone UTC)

echo "# $(go version); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') ($(nproc) cores); $(date -u +%FT%TZ)"
echo "# corpus: $corpus, $bytes bytes, $(find "$corpus" -name '*.jsonl' | wc -l) files"
for i in $(seq "$runs"); do
	echo "sessionpipe $(measure sp "${sp[@]}")"
	echo "ccusage $(measure cc "${cc[@]}")"
done >"$home/rows.txt"
python3 - "$home/rows.txt" "$bytes" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
size = int(sys.argv[2]) / 1e6
print(f"{'tool':<12} {'wall_s':>8} {'cpu_s':>8} {'rss_MB':>8} {'MB/cpu_s':>9} {'MB/s':>8}")
med = {}
for t, wall, cpu, rss in rows:
    wall, cpu, rss = float(wall), float(cpu), int(rss) / 1024
    med.setdefault(t, []).append((wall, cpu, rss))
    print(f"{t:<12} {wall:8.2f} {cpu:8.2f} {rss:8.0f} {size/cpu:9.0f} {size/wall:8.0f}")
print("# medians")
m = {}
for t, v in med.items():
    wall, cpu, rss = (statistics.median(x[i] for x in v) for i in range(3))
    m[t] = (wall, cpu, rss)
    print(f"{t:<12} {wall:8.2f} {cpu:8.2f} {rss:8.0f} {size/cpu:9.0f} {size/wall:8.0f}")
sp, cc = m["sessionpipe"], m["ccusage"]
print(f"# sessionpipe/ccusage: throughput per CPU-second {cc[1]/sp[1]:.2f}x, wall {cc[0]/sp[0]:.2f}x, peak RSS {sp[2]/cc[2]:.2f}x")
PY
# The same totals from both tools.
python3 - "$home/sp.json" "$home/cc.json" <<'PY'
import json, sys
sp = json.load(open(sys.argv[1])); cc = json.load(open(sys.argv[2]))["totals"]
ours = {k: sum(s[k] for s in sp) for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")}
theirs = {"input_tokens": cc["inputTokens"], "output_tokens": cc["outputTokens"], "cache_read_tokens": cc["cacheReadTokens"], "cache_write_tokens": cc["cacheCreationTokens"]}
cost = (round(sum(s["cost_usd"] for s in sp), 2), round(cc["totalCost"], 2))
print("# totals equal:", ours == theirs and cost[0] == cost[1], ours, "cost", cost)
PY
