#!/usr/bin/env bash
# Runs a command (the collector) with Jaeger v2 beside it, so that its
# traces pipeline has a store: `make run` and `make demo` use it. Jaeger
# (config/jaeger/jaeger.yaml, query API and UI on :16686) is built the first
# time (scripts/install-jaeger.sh), started unless one already answers on
# its query port, and stopped when the command ends. Its log is
# $MLX_DATA_DIR/jaeger.log. A signal to this script reaches the command,
# and both end.
#   scripts/with-jaeger.sh COMMAND [ARGS...]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$ROOT/scripts/install-jaeger.sh"
data=${MLX_DATA_DIR:-./.data}
query=${JAEGER_QUERY_HTTP:-127.0.0.1:16686}
jaeger= child=

cleanup() {
	if [[ -n $child ]]; then
		kill -TERM "$child" 2>/dev/null || true
		wait "$child" 2>/dev/null || true
	fi
	if [[ -n $jaeger ]]; then
		kill "$jaeger" 2>/dev/null || true
		wait "$jaeger" 2>/dev/null || true
	fi
}
trap cleanup EXIT
# The command gets TERM and ends; the loop below then sees it gone.
trap 'kill -TERM "$child" 2>/dev/null || true' TERM INT HUP

listening() { (exec 3<>"/dev/tcp/${query%:*}/${query##*:}") 2>/dev/null; }
if ! listening; then
	mkdir -p "$data"
	# A session of its own: Ctrl-C reaches the collector only, which then
	# flushes its last spans to Jaeger; Jaeger is stopped after it.
	setsid "$ROOT/bin/jaeger" --config "$ROOT/config/jaeger/jaeger.yaml" >"$data/jaeger.log" 2>&1 &
	jaeger=$!
	for ((i = 0; i < 100; i++)); do
		listening && break
		if ! kill -0 "$jaeger" 2>/dev/null; then
			echo "with-jaeger: Jaeger did not start; its log:" >&2
			tail -n 20 "$data/jaeger.log" >&2 || true
			exit 1
		fi
		sleep 0.1
	done
	echo "with-jaeger: Jaeger on http://$query (log: $data/jaeger.log)" >&2
fi
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
