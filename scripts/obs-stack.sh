#!/usr/bin/env bash
# Runs the observability stack on this host with the project's own configs:
# VictoriaMetrics scraping config/scrape (rendered), vmalert evaluating
# rules/*.yml (recording rules and alert state written back to
# VictoriaMetrics), and Alertmanager routing to the webhooks of
# config/alertmanager (rendered), Jaeger v2 storing traces in memory
# (config/jaeger/jaeger.yaml; JAEGER_* there set its addresses; built from
# the Go module proxy by scripts/install-jaeger.sh the first time), and
# VictoriaLogs storing the engine's log and the proxy's access log, which
# the collector sends it by OTLP (on OBS_ADDR:VLOGS_PORT, 9428; built by
# scripts/install-victorialogs.sh; kept VLOGS_RETENTION, 7d).
#
#   scripts/obs-stack.sh start [-e ENVFILE]...   render the configs, start them all, wait for them
#   scripts/obs-stack.sh stop                    stop what start started (by pid file)
#   scripts/obs-stack.sh status                  print each process and its address
#
# Configuration is render-config.sh's (config/scrape/nodes.env,
# config/alertmanager/receivers.env, -e files, then the environment), e.g.
#   VM_PORT=18428 VMALERT_PORT=18880 ALERTMANAGER_PORT=19093 \
#   ALERT_WEBHOOK_URL=http://127.0.0.1:5001/alert ONCALL_WEBHOOK_URL=http://127.0.0.1:5001/oncall \
#   scripts/obs-stack.sh start -e config/scrape/loopback.env
# and:
#   OBS_DIR         state, rendered configs, logs and pid files (./.data/obs)
#   VM_FLAGS        extra victoria-metrics flags (default: -search.latencyOffset=5s, so
#                   a fresh sample is queryable within seconds instead of 30 s)
#   VMALERT_FLAGS   extra vmalert flags (default: -evaluationInterval=15s; each rule
#                   group's own interval wins)
#   AM_FLAGS        extra prometheus-alertmanager flags
#   VLOGS_FLAGS     extra victoria-logs flags
# The binaries come from the Debian packages (scripts/install-deps.sh).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OBS_DIR=${OBS_DIR:-$ROOT/.data/obs}
VM_FLAGS=${VM_FLAGS:--search.latencyOffset=5s}
VMALERT_FLAGS=${VMALERT_FLAGS:--evaluationInterval=15s}
AM_FLAGS=${AM_FLAGS:-}
VLOGS_FLAGS=${VLOGS_FLAGS:-}
VLOGS_RETENTION=${VLOGS_RETENTION:-7d}

die() { echo "obs-stack: $*" >&2; exit 1; }

# value NAME: the rendered value of a render-config.sh variable, read back
# from the env files the same way (environment first).
value() {
	local name=$1 f line v=""
	for f in "$ROOT/config/scrape/nodes.env" "$ROOT/config/alertmanager/receivers.env" ${ENVFILES[@]+"${ENVFILES[@]}"}; do
		while IFS= read -r line || [[ -n $line ]]; do
			[[ $line =~ ^[[:space:]]*$name=(.*)$ ]] && v=${BASH_REMATCH[1]}
		done <"$f"
	done
	[[ -n ${!name+x} ]] && v=${!name}
	v=${v%\"} v=${v#\"} v=${v%\'} v=${v#\'}
	printf '%s' "$v"
}

wait_port() { # host port name logfile
	local i
	for ((i = 0; i < 100; i++)); do
		if (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; then
			return 0
		fi
		sleep 0.2
	done
	echo "obs-stack: $3 did not listen on $1:$2 within 20 s; its log:" >&2
	tail -n 20 "$4" >&2 || true
	return 1
}

# started NAME: whether NAME's pid file names a process that is still the
# one start_one started, and then its pid in PID. The file holds the pid
# and the program (argv[0]) it ran; the process's own argv[0]
# (/proc/PID/cmdline, else ps) must be that program. After a reboot the
# pid may be another program's, which stop must not kill.
started() {
	local f=$OBS_DIR/$1.pid pid="" prog="" cmd=""
	PID=
	[[ -f $f ]] || return 1
	{ IFS= read -r pid && IFS= read -r prog; } <"$f" || true
	[[ $pid =~ ^[0-9]+$ && -n $prog ]] || return 1
	kill -0 "$pid" 2>/dev/null || return 1
	if [[ -r /proc/$pid/cmdline ]]; then
		IFS= read -r -d '' cmd <"/proc/$pid/cmdline" || true
		[[ $cmd == "$prog" ]] || return 1
	else
		cmd=$(ps -o command= -p "$pid" 2>/dev/null) || return 1
		[[ $cmd == "$prog" || $cmd == "$prog "* ]] || return 1
	fi
	PID=$pid
}

start_one() { # name logfile command...
	local name=$1 log=$2
	shift 2
	if started "$name"; then
		die "$name already runs (pid $PID); run: $0 stop"
	fi
	"$@" >"$log" 2>&1 &
	printf '%s\n%s\n' "$!" "$1" >"$OBS_DIR/$name.pid"
}

stop_all() {
	local name pid i
	for name in vmalert alertmanager victoria-metrics jaeger victoria-logs; do
		[[ -f $OBS_DIR/$name.pid ]] || continue
		if started "$name"; then
			pid=$PID
			kill "$pid" 2>/dev/null || true
			for ((i = 0; i < 50; i++)); do
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.2
			done
			kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
		else
			pid=$(head -n 1 "$OBS_DIR/$name.pid")
			! kill -0 "$pid" 2>/dev/null || echo "obs-stack: pid $pid of $OBS_DIR/$name.pid is no longer $name; left alone" >&2
		fi
		rm -f "$OBS_DIR/$name.pid"
	done
}

cmd=${1:-}
(($#)) && shift
ENVFILES=()
while (($#)); do
	case $1 in
	-e) (($# >= 2)) || die "-e needs a file"; ENVFILES+=("$2"); shift 2 ;;
	*) die "unknown argument $1" ;;
	esac
done

case $cmd in
start)
	"$ROOT/scripts/install-deps.sh"
	"$ROOT/scripts/install-jaeger.sh"
	"$ROOT/scripts/install-victorialogs.sh"
	mkdir -p "$OBS_DIR/victoria-metrics" "$OBS_DIR/alertmanager" "$OBS_DIR/victoria-logs"
	args=()
	for f in ${ENVFILES[@]+"${ENVFILES[@]}"}; do args+=(-e "$f"); done
	"$ROOT/scripts/render-config.sh" ${args[@]+"${args[@]}"} -o "$OBS_DIR" >/dev/null

	host=$(value OBS_ADDR)
	vm_port=$(value VM_PORT)
	vmalert_port=$(value VMALERT_PORT)
	am_port=$(value ALERTMANAGER_PORT)
	vlogs_port=$(value VLOGS_PORT)
	vm=http://$host:$vm_port

	# shellcheck disable=SC2086 # the *_FLAGS are word lists
	start_one victoria-metrics "$OBS_DIR/victoria-metrics.log" \
		victoria-metrics -storageDataPath="$OBS_DIR/victoria-metrics" \
		-httpListenAddr="$host:$vm_port" -promscrape.config="$OBS_DIR/scrape.yml" \
		-loggerLevel=WARN $VM_FLAGS
	wait_port "$host" "$vm_port" victoria-metrics "$OBS_DIR/victoria-metrics.log" || { stop_all; exit 1; }

	# shellcheck disable=SC2086
	start_one alertmanager "$OBS_DIR/alertmanager.log" \
		prometheus-alertmanager --config.file="$OBS_DIR/alertmanager.yml" \
		--storage.path="$OBS_DIR/alertmanager" --web.listen-address="$host:$am_port" \
		--cluster.listen-address= --log.level=warn $AM_FLAGS
	wait_port "$host" "$am_port" alertmanager "$OBS_DIR/alertmanager.log" || { stop_all; exit 1; }

	# shellcheck disable=SC2086
	start_one vmalert "$OBS_DIR/vmalert.log" \
		vmalert -rule="$ROOT/rules/*.yml" -datasource.url="$vm" \
		-remoteWrite.url="$vm" -remoteRead.url="$vm" \
		-notifier.url="http://$host:$am_port" -httpListenAddr="$host:$vmalert_port" \
		-external.url="http://$host:$vmalert_port" -loggerLevel=WARN $VMALERT_FLAGS
	wait_port "$host" "$vmalert_port" vmalert "$OBS_DIR/vmalert.log" || { stop_all; exit 1; }

	jaeger_query=${JAEGER_QUERY_HTTP:-127.0.0.1:16686}
	start_one jaeger "$OBS_DIR/jaeger.log" "$ROOT/bin/jaeger" --config "$ROOT/config/jaeger/jaeger.yaml"
	wait_port "${jaeger_query%:*}" "${jaeger_query##*:}" jaeger "$OBS_DIR/jaeger.log" || { stop_all; exit 1; }

	# shellcheck disable=SC2086
	start_one victoria-logs "$OBS_DIR/victoria-logs.log" \
		"$ROOT/bin/victoria-logs" -storageDataPath="$OBS_DIR/victoria-logs" \
		-httpListenAddr="$host:$vlogs_port" -retentionPeriod="$VLOGS_RETENTION" \
		-loggerLevel=WARN $VLOGS_FLAGS
	wait_port "$host" "$vlogs_port" victoria-logs "$OBS_DIR/victoria-logs.log" || { stop_all; exit 1; }

	echo "victoria-metrics $vm"
	echo "vmalert          http://$host:$vmalert_port"
	echo "alertmanager     http://$host:$am_port"
	echo "jaeger           http://$jaeger_query (OTLP in: ${JAEGER_OTLP_GRPC:-127.0.0.1:14317})"
	echo "victoria-logs    http://$host:$vlogs_port (OTLP logs in: /insert/opentelemetry/v1/logs; LogsQL: /select/logsql/query; UI: /select/vmui)"
	echo "state and logs   $OBS_DIR"
	;;
stop)
	stop_all
	;;
status)
	rc=0
	for name in victoria-metrics vmalert alertmanager jaeger victoria-logs; do
		if started "$name"; then
			echo "$name running (pid $PID)"
		else
			echo "$name stopped"
			rc=1
		fi
	done
	exit "$rc"
	;;
*)
	sed -n '2,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
	[[ $cmd == -h || $cmd == --help ]] || exit 2
	;;
esac
