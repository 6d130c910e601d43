#!/usr/bin/env bash
# Runs the observability stack on this host with the project's own configs:
# VictoriaMetrics scraping config/scrape (rendered), vmalert evaluating
# rules/*.yml (recording rules and alert state written back to
# VictoriaMetrics), and Alertmanager routing to the webhooks of
# config/alertmanager (rendered), Jaeger v2 storing traces
# (config/jaeger/jaeger.yaml; JAEGER_* there set its addresses), and
# VictoriaLogs storing the engine's log and the proxy's access log, which
# the collector sends it by OTLP (on OBS_ADDR:VLOGS_PORT, 9428; kept
# VLOGS_RETENTION, 7d). Every program is bin/'s, built pinned from the Go
# module proxy by scripts/install-stores.sh the first time. Grafana, when it
# is installed (brew install grafana on a Mac; Grafana's own package on
# Linux), is started beside them on GRAFANA_PORT (3000) with the datasources
# and the dashboards of dashboards/ provisioned; when it is not, start says
# so in one line. The same script runs on macOS and Linux: no apt, no ip,
# no systemd.
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
#   VMALERT_FLAGS   extra vmalert flags (default: -evaluationInterval=15s, each rule
#                   group's own interval wins; -rule.evalDelay=5s, VM_FLAGS' latency)
#   AM_FLAGS        extra alertmanager flags
#   VLOGS_FLAGS     extra victoria-logs flags
#   JAEGER_DATA_DIR Jaeger's Badger store (./.data/jaeger, make run's too)
#   JAEGER_RETENTION how long Jaeger keeps a span (168h)
#   GRAFANA_BIN     Grafana's program (default: grafana, else grafana-server, on PATH)
#   GRAFANA_HOME    its homepath (default: Homebrew's opt/grafana/share/grafana,
#                   else /usr/share/grafana); GRAFANA_PORT its port (3000)
#   OBS_DRY_RUN=1   print each command start would run, run none (the tests)
#   STORES_BIN      where the programs are (./bin; install-stores.sh builds
#                   them there unless STORES_BIN is set elsewhere)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OBS_DIR=${OBS_DIR:-$ROOT/.data/obs}
VM_FLAGS=${VM_FLAGS:--search.latencyOffset=5s}
VMALERT_FLAGS=${VMALERT_FLAGS:--evaluationInterval=15s -rule.evalDelay=5s}
AM_FLAGS=${AM_FLAGS:-}
VLOGS_FLAGS=${VLOGS_FLAGS:-}
VLOGS_RETENTION=${VLOGS_RETENTION:-7d}
GRAFANA_PORT=${GRAFANA_PORT:-3000}
OBS_DRY_RUN=${OBS_DRY_RUN:-}
# uname's answer; the tests set it to run the Mac's branches on Linux.
OBS_OS=${OBS_OS:-$(uname -s)}
STORES_BIN=${STORES_BIN:-$ROOT/bin}
# Jaeger's Badger store: the one make run uses too, so the traces are the
# same whoever started Jaeger (config/jaeger/jaeger.yaml reads these).
export JAEGER_DATA_DIR=${JAEGER_DATA_DIR:-$ROOT/.data/jaeger}
export JAEGER_RETENTION=${JAEGER_RETENTION:-168h}

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
	[[ -z $OBS_DRY_RUN ]] || return 0
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
	if [[ -n $OBS_DRY_RUN ]]; then
		printf 'run %s:' "$name"
		printf ' %q' "$@"
		printf '\n'
		return 0
	fi
	"$@" >"$log" 2>&1 &
	printf '%s\n%s\n' "$!" "$1" >"$OBS_DIR/$name.pid"
}

stop_all() {
	local name pid i
	for name in grafana vmalert alertmanager victoria-metrics jaeger victoria-logs; do
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

# grafana_bin: Grafana's program, or nothing when it is not installed.
grafana_bin() {
	if [[ -n ${GRAFANA_BIN:-} ]]; then
		command -v "$GRAFANA_BIN" || true
		return 0
	fi
	command -v grafana || command -v grafana-server || true
}

# grafana_home: Grafana's homepath (conf/defaults.ini, public/), which its
# program must be given when run outside its service: Homebrew's on a Mac
# (brew --prefix, else its two usual prefixes), Debian's package's on Linux.
grafana_home() {
	local prefix="" c
	if [[ -n ${GRAFANA_HOME:-} ]]; then
		echo "$GRAFANA_HOME"
		return 0
	fi
	if [[ $OBS_OS == Darwin ]] && command -v brew >/dev/null 2>&1; then
		prefix=$(brew --prefix 2>/dev/null) || prefix=""
	fi
	for c in ${prefix:+"$prefix/opt/grafana/share/grafana"} /opt/homebrew/opt/grafana/share/grafana \
		/usr/local/opt/grafana/share/grafana /usr/share/grafana; do
		[[ -f $c/conf/defaults.ini ]] && { echo "$c"; return 0; }
	done
	return 0 # none found: the caller says so
}

# start_grafana HOST VM_URL JAEGER_URL VLOGS_URL AM_URL: Grafana on
# HOST:GRAFANA_PORT with its state under OBS_DIR/grafana and the shipped
# provisioning (dashboards/provisioning), its URLs and the dashboards' path
# made this stack's; or one line saying how to get it.
start_grafana() {
	local host=$1 vm=$2 jaeger=$3 vlogs=$4 am=$5 bin home prov
	bin=$(grafana_bin)
	if [[ -z $bin ]]; then
		if [[ $OBS_OS == Darwin ]]; then
			echo "grafana          not installed: brew install grafana, then make obs-stop obs-start (the dashboards: dashboards/*.json)"
		else
			echo "grafana          not installed: Grafana's own package (grafana.com/docs/grafana/latest/setup-grafana/installation), then make obs-stop obs-start"
		fi
		return 0
	fi
	home=$(grafana_home)
	if [[ -z $home ]]; then
		echo "grafana          $bin found but not its homepath (conf/defaults.ini): set GRAFANA_HOME; not started"
		return 0
	fi
	prov=$OBS_DIR/grafana/provisioning
	mkdir -p "$prov/datasources" "$prov/dashboards" "$prov/plugins" "$prov/alerting" \
		"$OBS_DIR/grafana/data" "$OBS_DIR/grafana/logs" "$OBS_DIR/grafana/plugins"
	sed -e "s|http://127.0.0.1:8428|$vm|; s|http://127.0.0.1:16686|$jaeger|; s|http://127.0.0.1:9428|$vlogs|" \
		"$ROOT/dashboards/provisioning/datasources.yml" >"$prov/datasources/mlx.yml"
	cat >>"$prov/datasources/mlx.yml" <<-EOF

		  # Added by obs-stack.sh: this stack's Alertmanager, for the alerts' views.
		  - name: Alertmanager (mlx)
		    uid: mlx-alertmanager
		    type: alertmanager
		    access: proxy
		    url: $am
		    editable: false
		    jsonData:
		      implementation: prometheus
	EOF
	sed -e "s|path: /var/lib/grafana/dashboards/mlx|path: $ROOT/dashboards|" \
		"$ROOT/dashboards/provisioning/dashboards.yml" >"$prov/dashboards/mlx.yml"
	# Grafana reads its settings from GF_* variables, over its homepath's
	# defaults.ini: nothing of the user's own Grafana is touched.
	export GF_PATHS_DATA=$OBS_DIR/grafana/data GF_PATHS_LOGS=$OBS_DIR/grafana/logs \
		GF_PATHS_PLUGINS=$OBS_DIR/grafana/plugins GF_PATHS_PROVISIONING=$prov \
		GF_SERVER_HTTP_ADDR=$host GF_SERVER_HTTP_PORT=$GRAFANA_PORT \
		GF_ANALYTICS_REPORTING_ENABLED=false GF_ANALYTICS_CHECK_FOR_UPDATES=false
	# Grafana 10+ is one program (grafana server); older ones grafana-server.
	if [[ ${bin##*/} == grafana-server ]]; then
		start_one grafana "$OBS_DIR/grafana.log" "$bin" --homepath "$home"
	else
		start_one grafana "$OBS_DIR/grafana.log" "$bin" server --homepath "$home"
	fi
	if ! wait_port "$host" "$GRAFANA_PORT" grafana "$OBS_DIR/grafana.log"; then
		echo "obs-stack: grafana did not start (the stores run without it)" >&2
		return 0
	fi
	echo "grafana          http://$host:$GRAFANA_PORT (admin/admin the first time; dashboards in the MLX folder)"
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
	[[ $STORES_BIN != "$ROOT/bin" ]] || "$ROOT/scripts/install-stores.sh"
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
		"$STORES_BIN/victoria-metrics" -storageDataPath="$OBS_DIR/victoria-metrics" \
		-httpListenAddr="$host:$vm_port" -promscrape.config="$OBS_DIR/scrape.yml" \
		-loggerLevel=WARN $VM_FLAGS
	wait_port "$host" "$vm_port" victoria-metrics "$OBS_DIR/victoria-metrics.log" || { stop_all; exit 1; }

	# shellcheck disable=SC2086
	start_one alertmanager "$OBS_DIR/alertmanager.log" \
		"$STORES_BIN/alertmanager" --config.file="$OBS_DIR/alertmanager.yml" \
		--storage.path="$OBS_DIR/alertmanager" --web.listen-address="$host:$am_port" \
		--cluster.listen-address= --log.level=warn $AM_FLAGS
	wait_port "$host" "$am_port" alertmanager "$OBS_DIR/alertmanager.log" || { stop_all; exit 1; }

	# shellcheck disable=SC2086
	start_one vmalert "$OBS_DIR/vmalert.log" \
		"$STORES_BIN/vmalert" -rule="$ROOT/rules/*.yml" -datasource.url="$vm" \
		-remoteWrite.url="$vm" -remoteRead.url="$vm" \
		-notifier.url="http://$host:$am_port" -httpListenAddr="$host:$vmalert_port" \
		-external.url="http://$host:$vmalert_port" -loggerLevel=WARN $VMALERT_FLAGS
	wait_port "$host" "$vmalert_port" vmalert "$OBS_DIR/vmalert.log" || { stop_all; exit 1; }

	jaeger_query=${JAEGER_QUERY_HTTP:-127.0.0.1:16686}
	start_one jaeger "$OBS_DIR/jaeger.log" "$STORES_BIN/jaeger" --config "$ROOT/config/jaeger/jaeger.yaml"
	wait_port "${jaeger_query%:*}" "${jaeger_query##*:}" jaeger "$OBS_DIR/jaeger.log" || { stop_all; exit 1; }

	# shellcheck disable=SC2086
	start_one victoria-logs "$OBS_DIR/victoria-logs.log" \
		"$STORES_BIN/victoria-logs" -storageDataPath="$OBS_DIR/victoria-logs" \
		-httpListenAddr="$host:$vlogs_port" -retentionPeriod="$VLOGS_RETENTION" \
		-loggerLevel=WARN $VLOGS_FLAGS
	wait_port "$host" "$vlogs_port" victoria-logs "$OBS_DIR/victoria-logs.log" || { stop_all; exit 1; }

	echo "victoria-metrics $vm"
	echo "vmalert          http://$host:$vmalert_port"
	echo "alertmanager     http://$host:$am_port"
	echo "jaeger           http://$jaeger_query (OTLP in: ${JAEGER_OTLP_GRPC:-127.0.0.1:14317})"
	echo "victoria-logs    http://$host:$vlogs_port (OTLP logs in: /insert/opentelemetry/v1/logs; LogsQL: /select/logsql/query; UI: /select/vmui)"
	start_grafana "$host" "$vm" "http://$jaeger_query" "http://$host:$vlogs_port" "http://$host:$am_port"
	echo "state and logs   $OBS_DIR"
	;;
stop)
	stop_all
	;;
status)
	rc=0
	for name in victoria-metrics vmalert alertmanager jaeger victoria-logs grafana; do
		[[ $name != grafana || -f $OBS_DIR/grafana.pid ]] || continue
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
