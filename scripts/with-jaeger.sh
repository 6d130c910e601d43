#!/usr/bin/env bash
# Runs a command (the collector) with Jaeger v2 beside it, so that its
# traces pipeline has a store: `make run` and `make demo` use it. Jaeger
# (config/jaeger/jaeger.yaml, query API and UI on :16686) is built the first
# time (scripts/install-jaeger.sh), started unless one already answers on
# its query port, and stopped when the command ends. Its log is
# $MLX_DATA_DIR/jaeger.log.
#   scripts/with-jaeger.sh COMMAND [ARGS...]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$ROOT/scripts/install-jaeger.sh"
data=${MLX_DATA_DIR:-./.data}
query=${JAEGER_QUERY_HTTP:-127.0.0.1:16686}
jaeger=
if ! (exec 3<>"/dev/tcp/${query%:*}/${query##*:}") 2>/dev/null; then
	mkdir -p "$data"
	"$ROOT/bin/jaeger" --config "$ROOT/config/jaeger/jaeger.yaml" >"$data/jaeger.log" 2>&1 &
	jaeger=$!
	echo "with-jaeger: Jaeger on http://$query (log: $data/jaeger.log)" >&2
fi
stop_jaeger() {
	if [[ -n $jaeger ]]; then
		kill "$jaeger" 2>/dev/null || true
		wait "$jaeger" 2>/dev/null || true
	fi
}
trap stop_jaeger EXIT
"$@" &
child=$!
# Ctrl-C reaches the command itself (same process group); a TERM sent to
# this script is passed on.
trap 'kill -TERM "$child" 2>/dev/null || true' TERM INT
while true; do
	rc=0
	wait "$child" || rc=$?
	kill -0 "$child" 2>/dev/null || break
done
exit "$rc"
