#!/usr/bin/env bash
# Runs every fuzz target of the project for a short time each (default 10s;
# FUZZTIME=2m scripts/fuzz.sh for a longer run). New failing inputs are
# written under the package's testdata/fuzz/ by `go test`; commit them with
# the fix. Usage: scripts/fuzz.sh [FUZZTIME]
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-${FUZZTIME:-10s}}

# Every Fuzz function in the repository, as "package target".
targets=$(grep -rl --include='*_test.go' '^func Fuzz' . | while read -r f; do
	for t in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$f"); do
		echo "./$(dirname "${f#./}") $t"
	done
done | sort -u)

status=0
while read -r pkg target; do
	[ -n "$pkg" ] || continue
	echo "fuzz $pkg $target for $fuzztime"
	if ! go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$pkg"; then
		status=1
	fi
done <<<"$targets"
exit $status
