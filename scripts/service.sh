#!/usr/bin/env bash
# Installs mlx-otelcol as a service, or removes it (make install, make
# uninstall):
#   Linux  a systemd unit, /etc/systemd/system/mlx-otelcol.service, from
#          deploy/systemd/mlx-otelcol.service.tmpl; runs as the system user
#          mlx-otelcol (created here), data in /var/lib/mlx-otelcol
#   macOS  a LaunchAgent of the user, ~/Library/LaunchAgents/io.mlx-otelcol.plist,
#          from deploy/launchd/io.mlx-otelcol.plist.tmpl; data in
#          ~/Library/Application Support/mlx-otelcol
# Both: the binary in $PREFIX/bin, the configs and the env file
# (deploy/mlx-otelcol.env, kept when already there) in the config directory,
# /etc/mlx-otelcol on Linux, $PREFIX/etc/mlx-otelcol on macOS.
#
#   scripts/service.sh install      install, then enable and start the service
#   scripts/service.sh uninstall    stop it, remove what install put; the data
#                                   directory (and the Linux user) stay
#
# Environment:
#   CONFIGS    config files, in order, each passed as --config (config/mlx.yaml)
#   BINARY     the collector to install (MLX_OTELCOL, else _build/mlx-otelcol)
#   HOSTFILE   the ring's hostfile to install beside the configs
#              (config/ring/hosts.json)
#   PREFIX     /usr/local; BINDIR ($PREFIX/bin), SYSCONFDIR, UNITDIR (Linux:
#              /etc/systemd/system) override single places
#   DESTDIR    stage the files under this directory: nothing is started, no
#              user is created (packaging, tests)
#   MLX_SERVICE_PLATFORM  linux or darwin in place of uname; another than
#              this machine's only with DESTDIR (the tests render the plist)
# Only bash (3.2, macOS's own, is enough) and coreutils or BSD tools are used.
set -euo pipefail
shopt -u patsub_replacement 2>/dev/null || true # bash 5.2: keep '&' literal in ${x//p/r}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NAME=mlx-otelcol
LABEL=io.mlx-otelcol
SERVICE_USER=mlx-otelcol

die() { echo "service: $*" >&2; exit 1; }
say() { echo "service: $*"; }
usage() { sed -n '2,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

ACTION=${1-}
case $ACTION in
install | uninstall) ;;
-h | --help) usage 0 ;;
*) usage 2 >&2 ;;
esac

host=$(uname -s)
case ${MLX_SERVICE_PLATFORM:-$host} in
Linux | linux) PLATFORM=linux ;;
Darwin | darwin) PLATFORM=darwin ;;
*) die "no service manager for ${MLX_SERVICE_PLATFORM:-$host} (Linux: systemd, macOS: launchd)" ;;
esac
DESTDIR=${DESTDIR-}
DESTDIR=${DESTDIR%/}
[[ -z $DESTDIR || $DESTDIR == /* ]] || DESTDIR=$PWD/$DESTDIR
if [[ -n ${MLX_SERVICE_PLATFORM-} && -z $DESTDIR ]]; then
	case $host in Linux) [[ $PLATFORM == linux ]] ;; Darwin) [[ $PLATFORM == darwin ]] ;; *) false ;; esac ||
		die "MLX_SERVICE_PLATFORM=$MLX_SERVICE_PLATFORM on $host: only with DESTDIR"
fi

PREFIX=${PREFIX:-/usr/local}
PREFIX=${PREFIX%/}
[[ $PREFIX == /* ]] || die "PREFIX is not an absolute path: $PREFIX"
BINDIR=${BINDIR:-$PREFIX/bin}
BIN_PATH=$BINDIR/$NAME

if [[ $PLATFORM == linux ]]; then
	SYSCONFDIR=${SYSCONFDIR:-/etc}
	UNITDIR=${UNITDIR:-/etc/systemd/system}
	UNIT_PATH=$UNITDIR/$NAME.service
	STATE_DIR=/var/lib/$NAME # StateDirectory=$NAME of the system manager
else
	SYSCONFDIR=${SYSCONFDIR:-$PREFIX/etc}
	# The user the agent runs as: the one who ran sudo make install, or
	# whoever runs this.
	AGENT_USER=$(id -un)
	AGENT_HOME=$HOME
	if [[ -z $DESTDIR && $EUID -eq 0 && -n ${SUDO_USER-} && $SUDO_USER != root ]]; then
		AGENT_USER=$SUDO_USER
		AGENT_HOME=$(dscl . -read "/Users/$AGENT_USER" NFSHomeDirectory 2>/dev/null | sed -n 's/^NFSHomeDirectory: //p')
		[[ -n $AGENT_HOME ]] || die "no home directory for $AGENT_USER"
	fi
	[[ $AGENT_HOME == /* ]] || die "HOME is not an absolute path: $AGENT_HOME"
	AGENT_UID=$(id -u "$AGENT_USER")
	PLIST_PATH=$AGENT_HOME/Library/LaunchAgents/$LABEL.plist
	DATA_DIR=$AGENT_HOME/Library/Application\ Support/$NAME
fi
CONF_DIR=${SYSCONFDIR%/}/$NAME
ENV_PATH=$CONF_DIR/$NAME.env
HOSTFILE_PATH=$CONF_DIR/hosts.json

# --- install ---------------------------------------------------------------

# The config files, resolved from the current directory, or else the
# repository; their installed names must differ.
# (bash 3.2 counts an empty array as unset under set -u: CONFIG_N counts.)
CONFIG_SRC=() CONFIG_DST=() CONFIG_N=0
resolve_configs() {
	local c src base seen=/
	for c in ${CONFIGS:-config/mlx.yaml}; do
		if [[ -f $c ]]; then
			src=$c
		elif [[ $c != /* && -f $ROOT/$c ]]; then
			src=$ROOT/$c
		else
			die "no config file $c"
		fi
		base=${src##*/}
		[[ $seen != */"$base"/* ]] || die "two configs named $base in CONFIGS"
		seen=$seen$base/
		CONFIG_SRC[CONFIG_N]=$src
		CONFIG_DST[CONFIG_N]=$CONF_DIR/$base
		CONFIG_N=$((CONFIG_N + 1))
	done
	((CONFIG_N > 0)) || die "CONFIGS is empty"
}

# writable DIR: DIR, or the nearest directory above it that exists, can be
# written.
writable() {
	local d=$1
	while [[ ! -e $d && $d == /*/* ]]; do d=${d%/*}; done
	[[ -w $d ]]
}

install_common() {
	local bin=${BINARY:-${MLX_OTELCOL:-$ROOT/_build/$NAME}} i d
	[[ -f $bin && -x $bin ]] || die "no collector at $bin (make build, or BINARY=...)"
	resolve_configs
	for d in "$DESTDIR$BINDIR" "$DESTDIR$CONF_DIR"; do
		writable "$d" || if [[ $PLATFORM == darwin ]]; then
			die "cannot write $d: sudo make install, or make install PREFIX=\$HOME/.local"
		else
			die "cannot write $d"
		fi
	done
	mkdir -p "$DESTDIR$BINDIR" "$DESTDIR$CONF_DIR"
	# A running binary is replaced by a rename, never written in place.
	install -m 0755 "$bin" "$DESTDIR$BIN_PATH.new"
	mv -f "$DESTDIR$BIN_PATH.new" "$DESTDIR$BIN_PATH"
	for ((i = 0; i < CONFIG_N; i++)); do
		install -m 0644 "${CONFIG_SRC[i]}" "$DESTDIR${CONFIG_DST[i]}"
	done
	# The ring's hostfile, rendered from config/scrape/nodes.env, for
	# config/node.yaml and config/ring.yaml (MLX_RING_HOSTFILE points here
	# unless the env file says otherwise); HOSTFILE names another, such as
	# one make obs-start rendered from the site's env file. make obs-render,
	# then make install again, after changing the nodes.
	local hosts=${HOSTFILE:-$ROOT/config/ring/hosts.json}
	[[ -f $hosts ]] || die "no hostfile $hosts (HOSTFILE)"
	install -m 0644 "$hosts" "$DESTDIR$HOSTFILE_PATH"
	# The env file holds the site's settings (and maybe secrets): installed
	# once, never overwritten.
	if [[ ! -e $DESTDIR$ENV_PATH ]]; then
		install -m 0640 "$ROOT/deploy/$NAME.env" "$DESTDIR$ENV_PATH"
	fi
}

# render TEMPLATE: the template with its @NAME@ placeholders replaced by the
# values in T_* (already escaped for the file's syntax).
PLACEHOLDERS="@SERVICE_USER@ @LABEL@ @STATE_NAME@ @ENV_FILE@ @EXEC_START@ @DATA_DIR@ @PROGRAM_ARGUMENTS@ @ENVIRONMENT_VARIABLES@ @RING_HOSTFILE@"
render() {
	local text p
	while read -r p; do
		[[ " $PLACEHOLDERS " == *" $p "* ]] || die "$1: unknown placeholder $p"
	done < <(grep -o '@[A-Z_]*@' "$1" | sort -u)
	text=$(cat "$1")
	text=${text//@SERVICE_USER@/$SERVICE_USER}
	text=${text//@LABEL@/$LABEL}
	text=${text//@STATE_NAME@/$NAME}
	text=${text//@ENV_FILE@/${T_ENV_FILE-}}
	text=${text//@EXEC_START@/${T_EXEC_START-}}
	text=${text//@DATA_DIR@/${T_DATA_DIR-}}
	text=${text//@PROGRAM_ARGUMENTS@/${T_PROGRAM_ARGUMENTS-}}
	text=${text//@ENVIRONMENT_VARIABLES@/${T_ENVIRONMENT_VARIABLES-}}
	text=${text//@RING_HOSTFILE@/$HOSTFILE_PATH}
	printf '%s\n' "$text"
}

# put_rendered TEMPLATE DEST [MODE]: the rendered template at DEST, mode
# MODE (0644), replaced by a rename (a reader never sees half a file). The
# new file is created 0600 and exclusively (a link planted at DEST.new is
# not written through), then given MODE: a plist that holds the env file's
# secrets is never readable by others, not even for a moment.
put_rendered() {
	rm -f "$2.new"
	(umask 077 && set -C && render "$1" >"$2.new")
	chmod "${3:-0644}" "$2.new"
	mv -f "$2.new" "$2"
}

# systemd's unit syntax gives meaning to blanks, quotes, '%', '$' and '\':
# install paths must not hold any.
unit_safe() {
	local p
	for p in "$@"; do
		[[ ! $p =~ [[:space:]%\$\"\'\\] ]] || die "a path in the unit would need quoting: $p"
	done
}

install_linux() {
	[[ -n $DESTDIR || $EUID -eq 0 ]] || die "run as root (sudo make install), or set DESTDIR"
	install_common
	unit_safe "$BIN_PATH" "$ENV_PATH" "${CONFIG_DST[@]}"
	local c
	T_EXEC_START=$BIN_PATH
	for c in "${CONFIG_DST[@]}"; do T_EXEC_START+=" --config $c"; done
	T_ENV_FILE=$ENV_PATH
	mkdir -p "$DESTDIR$UNITDIR"
	put_rendered "$ROOT/deploy/systemd/$NAME.service.tmpl" "$DESTDIR$UNIT_PATH"
	say "installed $DESTDIR$BIN_PATH, $DESTDIR$UNIT_PATH, configs and env file in $DESTDIR$CONF_DIR"

	if [[ -n $DESTDIR ]]; then
		say "staged under $DESTDIR; on the target: useradd --system --user-group --home-dir $STATE_DIR --no-create-home --shell /usr/sbin/nologin $SERVICE_USER; systemctl daemon-reload; systemctl enable --now $NAME"
		return
	fi
	if ! id -u "$SERVICE_USER" >/dev/null 2>&1; then
		local nologin
		nologin=$(command -v nologin || echo /bin/false)
		useradd --system --user-group --home-dir "$STATE_DIR" --no-create-home \
			--shell "$nologin" --comment "mlx-otelcol service" "$SERVICE_USER" ||
			die "could not create the user $SERVICE_USER"
		say "created the system user $SERVICE_USER (home $STATE_DIR)"
	fi
	if [[ -d /run/systemd/system ]]; then
		systemctl daemon-reload
		systemctl enable "$NAME.service"
		systemctl restart "$NAME.service"
		say "started: systemctl status $NAME; journalctl -u $NAME -f; data in $STATE_DIR"
	else
		say "systemd is not running here; to start it: systemctl daemon-reload && systemctl enable --now $NAME"
	fi
}

xml() {
	local s=$1
	s=${s//&/&amp;}
	s=${s//</&lt;}
	s=${s//>/&gt;}
	printf '%s' "$s"
}

# The agent's environment, in order, later values of a name replacing
# earlier ones (install_darwin starts it with PATH, so it is never empty).
ENV_K=() ENV_V=()
setenv() {
	local i
	for ((i = 0; i < ${#ENV_K[@]}; i++)); do
		if [[ ${ENV_K[i]} == "$1" ]]; then
			ENV_V[i]=$2
			return
		fi
	done
	ENV_K[i]=$1
	ENV_V[i]=$2
}

# load_env FILE: VAR=value lines (as systemd's EnvironmentFile= reads them:
# no expansion, optional surrounding quotes; also an `export ` prefix).
load_env() {
	local file=$1 line key value n=0
	while IFS= read -r line || [[ -n $line ]]; do
		n=$((n + 1))
		line=${line%$'\r'}
		[[ $line =~ ^[[:space:]]*(#|$) ]] && continue
		[[ $line =~ ^[[:space:]]*(export[[:space:]]+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]] ||
			die "$file:$n: not VAR=value: $line"
		key=${BASH_REMATCH[2]}
		value=${BASH_REMATCH[3]}
		if [[ $value =~ ^\"(.*)\"$ || $value =~ ^\'(.*)\'$ ]]; then
			value=${BASH_REMATCH[1]}
		fi
		if [[ $key == MLX_DATA_DIR ]]; then
			echo "service: $file:$n: MLX_DATA_DIR is the agent's data directory, $DATA_DIR: ignored" >&2
			continue
		fi
		setenv "$key" "$value"
	done <"$file"
}

install_darwin() {
	install_common
	local engine path c i nl=$'\n'
	# launchd gives an agent PATH=/usr/bin:/bin:/usr/sbin:/sbin: add the
	# engine's directory as found now, and Homebrew's.
	path=/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
	if engine=$(command -v mlx_lm.server 2>/dev/null) && [[ $engine == /* ]]; then
		engine=${engine%/*}
		[[ :$path: == *:$engine:* ]] || path=$engine:$path
	else
		echo "service: mlx_lm.server is not on PATH here: set PATH in $ENV_PATH and run make install again" >&2
	fi
	ENV_K=(PATH) ENV_V=("$path")
	setenv MLX_DATA_DIR "$DATA_DIR"
	setenv MLX_RING_HOSTFILE "$HOSTFILE_PATH"
	load_env "$DESTDIR$ENV_PATH"

	T_DATA_DIR=$(xml "$DATA_DIR")
	T_PROGRAM_ARGUMENTS=$'\t\t'"<string>$(xml "$BIN_PATH")</string>"
	for c in "${CONFIG_DST[@]}"; do
		T_PROGRAM_ARGUMENTS+=$nl$'\t\t<string>--config</string>'$nl$'\t\t'"<string>$(xml "$c")</string>"
	done
	T_ENVIRONMENT_VARIABLES=
	for ((i = 0; i < ${#ENV_K[@]}; i++)); do
		[[ -z $T_ENVIRONMENT_VARIABLES ]] || T_ENVIRONMENT_VARIABLES+=$nl
		T_ENVIRONMENT_VARIABLES+=$'\t\t'"<key>${ENV_K[i]}</key>$nl"$'\t\t'"<string>$(xml "${ENV_V[i]}")</string>"
	done

	mkdir -p "$DESTDIR${PLIST_PATH%/*}" "$DESTDIR$DATA_DIR"
	# 0600: the plist carries the env file's variables, OPIK_API_KEY and
	# MLX_METRICS_TOKEN among them (launchd reads it as root).
	put_rendered "$ROOT/deploy/launchd/$LABEL.plist.tmpl" "$DESTDIR$PLIST_PATH" 0600
	say "installed $DESTDIR$BIN_PATH, $DESTDIR$PLIST_PATH, configs and env file in $DESTDIR$CONF_DIR"

	if [[ -n $DESTDIR ]]; then
		say "staged under $DESTDIR; on the target: launchctl bootstrap gui/\$(id -u) $PLIST_PATH"
		return
	fi
	if ((EUID == 0)); then
		# sudo make install: the agent's files belong to its user (launchd
		# refuses an agent's plist owned by someone else).
		chown "$AGENT_USER" "$PLIST_PATH" "$DATA_DIR" "${PLIST_PATH%/*}"
	fi
	if ! command -v launchctl >/dev/null 2>&1; then
		say "no launchctl here; to start it: launchctl bootstrap gui/$AGENT_UID $PLIST_PATH"
		return
	fi
	local domain=gui/$AGENT_UID
	# A running agent is replaced: bootout stops it (SIGTERM, ExitTimeOut),
	# which can take a moment before bootstrap is accepted again.
	launchctl bootout "$domain/$LABEL" 2>/dev/null || true
	launchctl enable "$domain/$LABEL" 2>/dev/null || true
	local err
	for ((i = 0; ; i++)); do
		err=$(launchctl bootstrap "$domain" "$PLIST_PATH" 2>&1) && break
		((i < 30)) || die "launchctl bootstrap $domain $PLIST_PATH: $err (is $AGENT_USER logged in?)"
		sleep 1
	done
	say "started: launchctl print $domain/$LABEL; logs in $DATA_DIR (collector.log, server.log, logs/*.jsonl)"
}

# --- uninstall -------------------------------------------------------------

remove_common() {
	rm -f "$DESTDIR$BIN_PATH"
	[[ $CONF_DIR == /*/$NAME ]] || die "refusing to remove $CONF_DIR"
	rm -rf "$DESTDIR$CONF_DIR"
}

uninstall_linux() {
	[[ -n $DESTDIR || $EUID -eq 0 ]] || die "run as root (sudo make uninstall), or set DESTDIR"
	local running=
	[[ -z $DESTDIR && -d /run/systemd/system ]] && running=1
	if [[ -n $running ]]; then
		systemctl disable --now "$NAME.service" 2>/dev/null || true
	fi
	rm -f "$DESTDIR$UNIT_PATH"
	remove_common
	if [[ -n $running ]]; then
		systemctl daemon-reload
		systemctl reset-failed "$NAME.service" 2>/dev/null || true
	fi
	say "removed $DESTDIR$BIN_PATH, $DESTDIR$UNIT_PATH and $DESTDIR$CONF_DIR"
	say "kept the data, $DESTDIR$STATE_DIR, and the user $SERVICE_USER: rm -rf $STATE_DIR; userdel $SERVICE_USER"
}

uninstall_darwin() {
	if [[ -z $DESTDIR ]] && command -v launchctl >/dev/null 2>&1; then
		launchctl bootout "gui/$AGENT_UID/$LABEL" 2>/dev/null || true
	fi
	rm -f "$DESTDIR$PLIST_PATH"
	remove_common
	say "removed $DESTDIR$BIN_PATH, $DESTDIR$PLIST_PATH and $DESTDIR$CONF_DIR"
	say "kept the data, $DESTDIR$DATA_DIR"
}

"${ACTION}_$PLATFORM"
