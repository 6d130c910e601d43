#!/usr/bin/env bash
# Runs a command (the collector) with its stores beside it, so that its
# pipelines have somewhere to go: `make run` and `make demo` use it.
#   - Jaeger v2 for the traces (config/jaeger/jaeger.yaml; query API on
#     :16686; Badger in $MLX_DATA_DIR/jaeger, JAEGER_DATA_DIR, kept
#     JAEGER_RETENTION, 168h, so a restart keeps every trace);
#   - VictoriaLogs for the engine's log and the access log (OTLP in and
#     LogsQL on :9428, data in $MLX_DATA_DIR/victoria-logs, kept 7 days;
#     both built, pinned, by scripts/install-stores.sh the first time).
# Each is started when its address (JAEGER_QUERY_HTTP, MLX_VLOGS_URL) is on
# this machine and nothing answers there yet (make obs-start runs them too),
# and stopped when the command ends. A store that does not start is a
# warning, not an error: the collector then counts what it cannot deliver.
# Their logs are $MLX_DATA_DIR/jaeger.log and victoria-logs.log. A signal to
# this script reaches the command, and all end.
#   scripts/with-stores.sh COMMAND [ARGS...]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$ROOT/scripts/install-stores.sh" jaeger victoria-logs
data=${MLX_DATA_DIR:-./.data}
jaeger_query=${JAEGER_QUERY_HTTP:-127.0.0.1:16686}
vlogs_url=${MLX_VLOGS_URL:-http://127.0.0.1:9428}
export JAEGER_DATA_DIR=${JAEGER_DATA_DIR:-$data/jaeger}
vlogs=${vlogs_url#*://}
vlogs=${vlogs%%/*}
stores=() child=

cleanup() {
	if [[ -n $child ]]; then
		kill -TERM "$child" 2>/dev/null || true
		wait "$child" 2>/dev/null || true
	fi
	local pid
	for pid in ${stores[@]+"${stores[@]}"}; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
}
trap cleanup EXIT
# The command gets TERM and ends; the loop below then sees it gone.
trap 'kill -TERM "$child" 2>/dev/null || true' TERM INT HUP

listening() { (exec 3<>"/dev/tcp/${1%:*}/${1##*:}") 2>/dev/null; }

# start NAME HOST:PORT COMMAND...: start a store unless one listens there
# or the address is another machine's.
start() {
	local name=$1 addr=$2 pid i
	shift 2
	listening "$addr" && return 0
	case ${addr%:*} in
	127.* | localhost | "[::1]") ;;
	*)
		echo "with-stores: $name at $addr is not on this machine: not started" >&2
		return 0
		;;
	esac
	mkdir -p "$data"
	# A session of its own: Ctrl-C reaches the collector only, which then
	# flushes its last spans and records; the stores are stopped after it.
	# macOS has no setsid(1): perl (which it ships) makes the call.
	if command -v setsid >/dev/null 2>&1; then
		setsid "$@" >"$data/$name.log" 2>&1 &
	else
		perl -MPOSIX -e 'POSIX::setsid(); exec @ARGV or die "exec $ARGV[0]: $!"' -- "$@" >"$data/$name.log" 2>&1 &
	fi
	pid=$!
	stores+=("$pid")
	for ((i = 0; i < 100; i++)); do
		listening "$addr" && break
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "with-stores: $name did not start (the collector goes on without it); its log:" >&2
			tail -n 20 "$data/$name.log" >&2 || true
			return 0
		fi
		sleep 0.1
	done
	echo "with-stores: $name on http://$addr (log: $data/$name.log)" >&2
}

start jaeger "$jaeger_query" "$ROOT/bin/jaeger" --config "$ROOT/config/jaeger/jaeger.yaml"
start victoria-logs "$vlogs" "$ROOT/bin/victoria-logs" -storageDataPath="$data/victoria-logs" \
	-httpListenAddr="$vlogs" -retentionPeriod=7d -loggerLevel=WARN

"$@" &
child=$!
# wait returns early (above 128) when a trapped signal arrives while the
# command still runs: wait again until it has ended.
while true; do
	rc=0
	wait "$child" || rc=$?
	kill -0 "$child" 2>/dev/null || break
done
child=
exit "$rc"
