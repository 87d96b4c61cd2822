#!/usr/bin/env bash
# ccusage.sh: install the pinned ccusage release and run it offline and
# hermetically on one transcript root, the way internal/testutil/ccusage does in tests.
#
#   scripts/ccusage.sh claude|codex|pi|openclaw ROOT [REPORT] [ARGS...]
#   scripts/ccusage.sh path        # install if needed, print the binary path
#
# ROOT is what ~/.claude, ~/.codex, ~/.pi/agent or ~/.openclaw is on a real
# machine: it holds projects/ (claude), sessions/ (codex, pi) or agents/
# (openclaw). REPORT is session (default), daily, weekly, monthly or blocks
# (claude); without ARGS the report is printed as JSON. The run always has
# --offline (embedded LiteLLM prices, no network), HOME set to an empty
# temporary directory (also the working directory, so no config file is
# found) and an environment holding only PATH, HOME, TZ=UTC, NO_COLOR=1 and
# the root's variable (CLAUDE_CONFIG_DIR, CODEX_HOME, PI_AGENT_DIR=ROOT/sessions,
# OPENCLAW_DIR).
#
# Install directory: $SESSIONPIPE_CCUSAGE_DIR, else
# ${XDG_CACHE_HOME:-$HOME/.cache}/sessionpipe/ccusage-$VERSION; installs take
# an flock on DIR/.install.lock, shared with the Go helper.
#
# Examples:
#   scripts/ccusage.sh claude ~/.claude                  # per-session JSON
#   scripts/ccusage.sh codex ~/.codex daily --breakdown  # daily table
#   scripts/ccusage.sh pi ~/.pi/agent session --json --single-thread
set -euo pipefail

VERSION=20.0.24

usage() {
	sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

die() {
	echo "ccusage.sh: $*" >&2
	exit 1
}

install_dir() {
	if [[ -n ${SESSIONPIPE_CCUSAGE_DIR:-} ]]; then
		echo "$SESSIONPIPE_CCUSAGE_DIR"
	elif [[ -n ${XDG_CACHE_HOME:-} ]]; then
		echo "$XDG_CACHE_HOME/sessionpipe/ccusage-$VERSION"
	elif [[ -n ${HOME:-} ]]; then
		echo "$HOME/.cache/sessionpipe/ccusage-$VERSION"
	else
		die "none of SESSIONPIPE_CCUSAGE_DIR, XDG_CACHE_HOME, HOME is set"
	fi
}

native_package() {
	local os arch
	case "$(uname -s)" in
	Linux) os=linux ;;
	Darwin) os=darwin ;;
	*) die "no ccusage native binary for $(uname -s)" ;;
	esac
	case "$(uname -m)" in
	x86_64 | amd64) arch=x64 ;;
	aarch64 | arm64) arch=arm64 ;;
	*) die "no ccusage native binary for $(uname -m)" ;;
	esac
	echo "ccusage-$os-$arch"
}

# check_binary BIN: set the run bit if needed, check the version.
check_binary() {
	local bin=$1 got
	[[ -f $bin ]] || return 1
	[[ -x $bin ]] || chmod +x "$bin"
	got=$(env -i PATH=/usr/bin:/bin NO_COLOR=1 "$bin" --version 2>/dev/null) || return 1
	[[ $got == "ccusage $VERSION" ]]
}

# ensure_installed prints the path of the native binary, installing it first.
ensure_installed() {
	local dir bin
	dir=$(install_dir)
	bin="$dir/node_modules/@ccusage/$(native_package)/bin/ccusage"
	mkdir -p "$dir"
	command -v flock >/dev/null || die "flock not found (Debian: apt-get install util-linux)"
	exec 9>"$dir/.install.lock"
	flock -w 600 9 || die "timed out waiting for the install lock $dir/.install.lock"
	if ! check_binary "$bin"; then
		command -v npm >/dev/null ||
			die "npm not found in PATH: install Node.js 20+ and npm (Debian: apt-get install nodejs npm)"
		echo "ccusage.sh: installing ccusage@$VERSION into $dir" >&2
		npm install --prefix "$dir" --no-audit --no-fund "ccusage@$VERSION" >&2 ||
			die "npm install ccusage@$VERSION failed"
		check_binary "$bin" ||
			die "no working ccusage $VERSION binary at $bin after install (remove $dir and retry)"
	fi
	exec 9>&-
	echo "$bin"
}

[[ $# -ge 1 ]] || usage
kind=$1
shift
if [[ $kind == path ]]; then
	ensure_installed
	exit 0
fi
[[ $# -ge 1 ]] || usage
root=$1
shift
[[ -d $root ]] || die "root $root is not a directory"
root=$(cd "$root" && pwd)

case "$kind" in
claude) var="CLAUDE_CONFIG_DIR=$root" ;;
codex) var="CODEX_HOME=$root" ;;
pi) var="PI_AGENT_DIR=$root/sessions" ;;
openclaw) var="OPENCLAW_DIR=$root" ;;
*) usage ;;
esac

report=session
if [[ $# -ge 1 && $1 =~ ^(session|daily|weekly|monthly|blocks)$ ]]; then
	report=$1
	shift
fi
if [[ $# -eq 0 ]]; then
	set -- --json
fi

bin=$(ensure_installed)
home=$(mktemp -d "${TMPDIR:-/tmp}/ccusage-home.XXXXXX")
trap 'rm -rf "$home"' EXIT
cd "$home"
env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" TZ=UTC NO_COLOR=1 "$var" \
	"$bin" "$kind" "$report" --offline --timezone UTC "$@"
