#!/usr/bin/env bash
# Renders the observability stack's configs from their templates:
#   config/scrape/scrape.yml.tmpl             -> scrape.yml        (VictoriaMetrics / Prometheus)
#   config/scrape/push.yml.tmpl               -> push.yml          (the same, for nodes that push)
#   config/alertmanager/alertmanager.yml.tmpl -> alertmanager.yml  (Alertmanager)
#   config/ring/hosts.json.tmpl               -> hosts.json        (mlx.launch's ring hostfile)
#
# Values come from, lowest to highest precedence:
#   config/scrape/nodes.env, config/alertmanager/receivers.env  (the defaults)
#   each -e FILE, in order
#   the environment (RANK0_ADDR=127.0.0.1 PROXY_PORT=18080 ... render-config.sh)
# Env files are KEY=VALUE lines (no shell expansion; # comments, blank lines
# and optional surrounding quotes allowed). Only bash and coreutils are used.
#
# Usage:
#   scripts/render-config.sh                  write the three files next to their templates
#   scripts/render-config.sh -o DIR           write DIR/scrape.yml, DIR/alertmanager.yml, DIR/hosts.json
#   scripts/render-config.sh -e config/scrape/loopback.env -o /tmp/stack
#   scripts/render-config.sh --check          exit 1 if the checked-in files differ from
#                                             the templates rendered with the defaults only
set -euo pipefail
shopt -u patsub_replacement 2>/dev/null || true # bash 5.2: keep '&' literal in ${x//p/r}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SCRAPE_TMPL=$ROOT/config/scrape/scrape.yml.tmpl
PUSH_TMPL=$ROOT/config/scrape/push.yml.tmpl
AM_TMPL=$ROOT/config/alertmanager/alertmanager.yml.tmpl
HOSTS_TMPL=$ROOT/config/ring/hosts.json.tmpl
DEFAULT_ENVS=("$ROOT/config/scrape/nodes.env" "$ROOT/config/alertmanager/receivers.env")

VARS=(RANK0_ADDR RANK1_ADDR RANK0_RING_IP RANK1_RING_IP RANK0_NODE RANK1_NODE OBS_ADDR
	PROXY_PORT HW_PORT KV_PORT SUPERVISOR_PORT LOGPIPE_PORT OTELCOL_PORT
	RANK1_HW_PORT RANK1_OTELCOL_PORT GATEWAY_OTELCOL_PORT VM_PORT VLOGS_PORT VMALERT_PORT ALERTMANAGER_PORT
	SCRAPE_INTERVAL SCRAPE_TIMEOUT ONCALL_WEBHOOK_URL ALERT_WEBHOOK_URL ALERT_GROUP_WAIT ALERT_GROUP_INTERVAL
	SMTP_SMARTHOST SMTP_FROM SMTP_AUTH_USERNAME SMTP_AUTH_PASSWORD SMTP_REQUIRE_TLS
	ONCALL_EMAIL_TO ALERT_EMAIL_TO ONCALL_SLACK_WEBHOOK_URL ALERT_SLACK_WEBHOOK_URL
	ONCALL_DISCORD_WEBHOOK_URL ALERT_DISCORD_WEBHOOK_URL TELEGRAM_BOT_TOKEN
	ONCALL_TELEGRAM_CHAT_ID ALERT_TELEGRAM_CHAT_ID PUSHOVER_TOKEN
	ONCALL_PUSHOVER_USER_KEY ALERT_PUSHOVER_USER_KEY)

die() { echo "render-config: $*" >&2; exit 1; }

usage() { sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

# The values, as VAL_<NAME> variables: macOS's bash (3.2) has no
# associative arrays, and make obs-start runs there too.
setval() { printf -v "VAL_$1" '%s' "$2"; }
val() { local n="VAL_$1"; printf '%s' "${!n}"; }

is_known() {
	local v
	for v in "${VARS[@]}"; do [[ $v == "$1" ]] && return 0; done
	return 1
}

# load_env FILE: KEY=VALUE lines into VAL (later files win).
load_env() {
	local file=$1 line key value n=0
	[[ -r $file ]] || die "cannot read env file $file"
	while IFS= read -r line || [[ -n $line ]]; do
		n=$((n + 1))
		line=${line%$'\r'}
		[[ $line =~ ^[[:space:]]*(#|$) ]] && continue
		[[ $line =~ ^[[:space:]]*([A-Z0-9_]+)=(.*)$ ]] || die "$file:$n: not KEY=VALUE: $line"
		key=${BASH_REMATCH[1]}
		value=${BASH_REMATCH[2]}
		value=${value%"${value##*[![:space:]]}"} # trailing blanks
		if [[ $value =~ ^\"(.*)\"$ || $value =~ ^\'(.*)\'$ ]]; then
			value=${BASH_REMATCH[1]}
		fi
		is_known "$key" || die "$file:$n: unknown variable $key (known: ${VARS[*]})"
		setval "$key" "$value"
	done <"$file"
}

# render TEMPLATE OUT: fill the @-delimited names, keep "#@if NAME" blocks when NAME is set.
render() {
	local tmpl=$1 out=$2 line v ref n=0 keep=1 in_block=0 tmp
	tmp=$(mktemp "${out}.XXXXXX")
	while IFS= read -r line || [[ -n $line ]]; do
		n=$((n + 1))
		if [[ $line =~ ^#@if[[:space:]]+([A-Z0-9_]+)[[:space:]]*$ ]]; then
			((in_block)) && die "$tmpl:$n: nested #@if"
			is_known "${BASH_REMATCH[1]}" || die "$tmpl:$n: unknown variable ${BASH_REMATCH[1]}"
			in_block=1
			[[ -n $(val "${BASH_REMATCH[1]}") ]] && keep=1 || keep=0
			continue
		fi
		if [[ $line =~ ^#@endif[[:space:]]*$ ]]; then
			((in_block)) || die "$tmpl:$n: #@endif without #@if"
			in_block=0 keep=1
			continue
		fi
		((keep)) || continue
		for v in "${VARS[@]}"; do
			ref=VAL_$v
			line=${line//@$v@/${!ref}}
		done
		[[ $line =~ @[A-Z0-9_]+@ ]] && { rm -f "$tmp"; die "$tmpl:$n: unknown placeholder ${BASH_REMATCH[0]}"; }
		printf '%s\n' "$line" >>"$tmp"
	done <"$tmpl"
	((in_block)) && { rm -f "$tmp"; die "$tmpl: #@if without #@endif"; }
	mv -f "$tmp" "$out"
}

validate() {
	local v
	for v in RANK0_ADDR OBS_ADDR; do
		[[ -n $(val "$v") ]] || die "$v must not be empty"
	done
	local host_re='^[][A-Za-z0-9.:_-]*$'
	for v in RANK0_ADDR RANK1_ADDR OBS_ADDR; do
		[[ $(val "$v") =~ $host_re ]] || die "$v=$(val "$v"): not a host name or address"
	done
	local ip_re='^[0-9A-Fa-f.:]+$'
	[[ ${VAL_RANK0_RING_IP} =~ $ip_re ]] || die "RANK0_RING_IP=${VAL_RANK0_RING_IP}: not an IP address"
	if [[ -n ${VAL_RANK1_ADDR} ]]; then
		[[ ${VAL_RANK1_RING_IP} =~ $ip_re ]] || die "RANK1_RING_IP=${VAL_RANK1_RING_IP}: not an IP address"
	fi
	for v in PROXY_PORT HW_PORT KV_PORT SUPERVISOR_PORT LOGPIPE_PORT OTELCOL_PORT \
		RANK1_HW_PORT RANK1_OTELCOL_PORT GATEWAY_OTELCOL_PORT VM_PORT VLOGS_PORT VMALERT_PORT ALERTMANAGER_PORT; do
		[[ $(val "$v") =~ ^[0-9]+$ ]] && ((10#$(val "$v") >= 1 && 10#$(val "$v") <= 65535)) ||
			die "$v=$(val "$v"): not a port"
	done
	for v in SCRAPE_INTERVAL SCRAPE_TIMEOUT ALERT_GROUP_WAIT ALERT_GROUP_INTERVAL; do
		[[ $(val "$v") =~ ^[0-9]+(ms|s|m|h)$ ]] || die "$v=$(val "$v"): not a duration (10s, 1m...)"
	done
	# The receivers' channels: each off while empty, checked when set (a
	# quote or a newline would break out of the YAML string it fills).
	for v in ONCALL_WEBHOOK_URL ALERT_WEBHOOK_URL ONCALL_SLACK_WEBHOOK_URL ALERT_SLACK_WEBHOOK_URL \
		ONCALL_DISCORD_WEBHOOK_URL ALERT_DISCORD_WEBHOOK_URL; do
		[[ -z $(val "$v") || $(val "$v") =~ ^https?://[^[:space:]\"]+$ ]] || die "$v=$(val "$v"): not an http(s) URL"
	done
	for v in SMTP_SMARTHOST SMTP_FROM SMTP_AUTH_USERNAME SMTP_AUTH_PASSWORD ONCALL_EMAIL_TO ALERT_EMAIL_TO \
		TELEGRAM_BOT_TOKEN PUSHOVER_TOKEN ONCALL_PUSHOVER_USER_KEY ALERT_PUSHOVER_USER_KEY; do
		[[ $(val "$v") != *[\"\\]* ]] || die "$v: no double quote or backslash, please"
	done
	for v in ONCALL_TELEGRAM_CHAT_ID ALERT_TELEGRAM_CHAT_ID; do
		[[ -z $(val "$v") || $(val "$v") =~ ^-?[0-9]+$ ]] || die "$v=$(val "$v"): not a numeric chat id"
	done
	[[ ${VAL_SMTP_REQUIRE_TLS} =~ ^(true|false)$ ]] || die "SMTP_REQUIRE_TLS=${VAL_SMTP_REQUIRE_TLS}: true or false"
	for v in ONCALL ALERT; do
		[[ -z $(val "${v}_EMAIL_TO") || -n ${VAL_SMTP_SMARTHOST} ]] || die "${v}_EMAIL_TO is set but SMTP_SMARTHOST is not"
		[[ -z $(val "${v}_TELEGRAM_CHAT_ID") || -n ${VAL_TELEGRAM_BOT_TOKEN} ]] || die "${v}_TELEGRAM_CHAT_ID is set but TELEGRAM_BOT_TOKEN is not"
		[[ -z $(val "${v}_PUSHOVER_USER_KEY") || -n ${VAL_PUSHOVER_TOKEN} ]] || die "${v}_PUSHOVER_USER_KEY is set but PUSHOVER_TOKEN is not"
	done
}

OUT=""
CHECK=0
EXTRA=()
while (($#)); do
	case $1 in
	-o) (($# >= 2)) || usage 2; OUT=$2; shift 2 ;;
	-e) (($# >= 2)) || usage 2; EXTRA+=("$2"); shift 2 ;;
	--check) CHECK=1; shift ;;
	-h | --help) usage 0 ;;
	*) echo "render-config: unknown argument $1" >&2; usage 2 ;;
	esac
done

for v in "${VARS[@]}"; do setval "$v" ""; done
for f in "${DEFAULT_ENVS[@]}"; do load_env "$f"; done
if ((!CHECK)); then
	for f in ${EXTRA[@]+"${EXTRA[@]}"}; do load_env "$f"; done
	for v in "${VARS[@]}"; do
		[[ -z ${!v+x} ]] || setval "$v" "${!v}"
	done
fi
[[ -n $VAL_RANK1_HW_PORT ]] || setval RANK1_HW_PORT "$VAL_HW_PORT"
[[ -n $VAL_RANK1_OTELCOL_PORT ]] || setval RANK1_OTELCOL_PORT "$VAL_OTELCOL_PORT"
validate

if ((CHECK)); then
	tmpdir=$(mktemp -d)
	trap 'rm -rf "$tmpdir"' EXIT
	render "$SCRAPE_TMPL" "$tmpdir/scrape.yml"
	render "$PUSH_TMPL" "$tmpdir/push.yml"
	render "$AM_TMPL" "$tmpdir/alertmanager.yml"
	render "$HOSTS_TMPL" "$tmpdir/hosts.json"
	status=0
	diff -u "$ROOT/config/scrape/scrape.yml" "$tmpdir/scrape.yml" || status=1
	diff -u "$ROOT/config/scrape/push.yml" "$tmpdir/push.yml" || status=1
	diff -u "$ROOT/config/alertmanager/alertmanager.yml" "$tmpdir/alertmanager.yml" || status=1
	diff -u "$ROOT/config/ring/hosts.json" "$tmpdir/hosts.json" || status=1
	((status == 0)) || echo "render-config: checked-in configs are stale; run scripts/render-config.sh" >&2
	exit "$status"
fi

if [[ -n $OUT ]]; then
	mkdir -p "$OUT"
	render "$SCRAPE_TMPL" "$OUT/scrape.yml"
	render "$PUSH_TMPL" "$OUT/push.yml"
	render "$AM_TMPL" "$OUT/alertmanager.yml"
	render "$HOSTS_TMPL" "$OUT/hosts.json"
	echo "$OUT/scrape.yml"
	echo "$OUT/push.yml"
	echo "$OUT/alertmanager.yml"
	echo "$OUT/hosts.json"
else
	render "$SCRAPE_TMPL" "$ROOT/config/scrape/scrape.yml"
	render "$PUSH_TMPL" "$ROOT/config/scrape/push.yml"
	render "$AM_TMPL" "$ROOT/config/alertmanager/alertmanager.yml"
	render "$HOSTS_TMPL" "$ROOT/config/ring/hosts.json"
	echo "$ROOT/config/scrape/scrape.yml"
	echo "$ROOT/config/scrape/push.yml"
	echo "$ROOT/config/alertmanager/alertmanager.yml"
	echo "$ROOT/config/ring/hosts.json"
fi
