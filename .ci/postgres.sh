#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster listening only on a Unix socket and
# prints the URL for FLOWER_TEST_POSTGRES:
#
#   eval "$(.ci/postgres.sh start DIR)"   # exports FLOWER_TEST_POSTGRES
#   .ci/postgres.sh stop DIR
#
# DIR holds the cluster (DIR/data) and its socket (DIR/sock). Run as root
# (CI), the cluster belongs to the postgres user, since initdb and the
# server refuse to run as root. Uses Debian's postgresql (apt-get install
# postgresql) from /usr/lib/postgresql/*/bin or PATH. Idempotent: a cluster
# already running in DIR is reused.
set -euo pipefail

cmd=${1:?usage: postgres.sh start|stop DIR}
dir=${2:?usage: postgres.sh start|stop DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$bin" ]; then bin=$(dirname "$(command -v pg_ctl)"); fi

as_owner() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$cmd" in
start)
	if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi
	if [ ! -f "$dir/data/PG_VERSION" ]; then
		as_owner "$bin/initdb" -D "$dir/data" -U flower --auth=trust -E UTF8 --no-sync >"$dir/initdb.log"
	fi
	mkdir -p "$dir/sock"
	if [ "$(id -u)" = 0 ]; then chown postgres: "$dir/sock"; fi
	if ! as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
		# No TCP; the socket in DIR/sock; fsync stays on: the store's
		# durability is what the tests are about.
		as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -s start \
			-o "-c listen_addresses='' -c unix_socket_directories='$dir/sock' -c max_connections=200"
	fi
	url="postgres://flower@/postgres?host=$dir/sock"
	echo "export FLOWER_TEST_POSTGRES='$url'"
	;;
stop)
	as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w -s stop || true
	;;
*)
	echo "postgres.sh: unknown command $cmd (start or stop)" >&2
	exit 2
	;;
esac
