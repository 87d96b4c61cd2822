#!/usr/bin/env bash
# Runs BenchmarkDecode (benchmarks/decode_test.go) and summarises it with
# benchstat. Usage, from anywhere in the repository:
#
#   benchmarks/run.sh [OUTDIR]          # default OUTDIR: benchmarks/results
#   COUNT=10 BENCHTIME=2s benchmarks/run.sh
#
# Writes OUTDIR/decode.txt (raw `go test -bench` output, both builds),
# OUTDIR/decode-benchstat.txt (side-by-side table, ratios against
# encoding-json) and OUTDIR/decode-summary.md (compact markdown table), and
# prints all three. It takes about 10 minutes with COUNT=5 on 2 cores.
#
# Two builds: the default one (every implementation but encoding/json/v2),
# then GOEXPERIMENT=jsonv2 for encoding-json-v2 and encoding-json-v1onv2
# (encoding/json as reimplemented on top of v2 under that experiment).
set -euo pipefail

cd "$(dirname "$0")/.."
out=${1:-benchmarks/results}
count=${COUNT:-5}
benchtime=${BENCHTIME:-1s}
benchstat=${BENCHSTAT:-go run golang.org/x/perf/cmd/benchstat@latest}
order='encoding-json encoding-json-v2 encoding-json-v1onv2 sessionpipe segmentio goccy sonic sonic-nocopy fastjson simdjson simdjson-nd floor-indexbyte floor-indexbyte-quote floor-copy'

mkdir -p "$out"
raw=$out/decode.txt
{
	echo "# $(go version)"
	echo "# CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') ($(nproc) cores)"
	echo "# count=$count benchtime=$benchtime cpu=1, $(date -u +%Y-%m-%dT%H:%MZ)"
} >"$raw"

go -C benchmarks test -run='^$' -bench='^BenchmarkDecode$' -benchtime="$benchtime" -count="$count" -cpu=1 -timeout=2h \
	. | tee -a "$raw"
GOEXPERIMENT=jsonv2 go -C benchmarks test -run='^$' -bench='^BenchmarkDecode$/./^impl=encoding-json-v' \
	-benchtime="$benchtime" -count="$count" -cpu=1 -timeout=2h . | tee -a "$raw"

$benchstat -col "/impl@($order)" -row /corpus "$raw" | tee "$out/decode-benchstat.txt"

# Compact table: one row per implementation, throughput and its ratio to
# encoding-json per corpus, lines/s and allocs/op.
$benchstat -format csv -row "/impl@($order)" -col /corpus "$raw" 2>/dev/null | awk -F, '
	/^,/ && $2 != "" && $2 !~ /\// && $3 == "" { for (i = 2; i <= NF; i += 2) if ($i != "") corp[++nc] = $i; next }
	/^,/ { unit = $2; next }
	/^$/ { unit = ""; next }
	unit != "" && $1 != "" && $1 != "geomean" {
		if (!($1 in seen)) { seen[$1] = 1; names[++n] = $1 }
		for (c = 1; c <= 2; c++) v[$1, unit, c] = $(2 * c)
	}
	END {
		printf "| impl | %s MB/s | × encoding-json | %s MB/s | × encoding-json | %s lines/s | %s lines/s | %s allocs/op | %s allocs/op |\n", corp[1], corp[2], corp[1], corp[2], corp[1], corp[2]
		print "|---|--:|--:|--:|--:|--:|--:|--:|--:|"
		for (i = 1; i <= n; i++) {
			k = names[i]; row = "| " k
			for (c = 1; c <= 2; c++) {
				bs = v[k, "B/s", c]; base = v["encoding-json", "B/s", c]
				row = row sprintf(" | %.0f | %s", bs / 1e6, (bs != "" && base != "" ? sprintf("%.1f×", bs / base) : ""))
			}
			for (c = 1; c <= 2; c++) row = row sprintf(" | %.0f", v[k, "lines/s", c])
			for (c = 1; c <= 2; c++) row = row sprintf(" | %.0f", v[k, "allocs/op", c])
			print row " |"
		}
	}' | tee "$out/decode-summary.md"
