#!/bin/sh
# Issue the NATS identity of one agent host's tailer:
#
#   deploy/gen-tailer-user.sh HOST [-servers tls://nats.example.com:4222,…] > HOST.env
#
# adds user tailer-HOST to deploy/nats/users.conf (it may publish only
# sessionpipe.entries.HOST.> and sessionpipe.dead.HOST) and prints the
# settings for the tailer on HOST (NATS_URL with its password, …) as
# KEY=VALUE lines: keep that output secret, on HOST only. Then reload the
# servers: docker compose kill -s HUP nats-1 nats-2 nats-3
# Flags (before HOST) are those of deploy/genuser: -prefix, -stream, -users.
set -eu
cd "$(dirname "$0")/.."
if [ $# -lt 1 ]; then
	echo "usage: deploy/gen-tailer-user.sh [flags] HOST" >&2
	exit 2
fi
exec go run ./deploy/genuser "$@"
