#!/usr/bin/env bash
# Installs Debian's chromium, which the `chromium` test of cmd/mlxbench uses
# to render mlxbench's HTML report headless and check every plot shows.
# Idempotent and silent when /usr/bin/chromium is there. Runs apt-get as
# root, or through sudo otherwise. About 100 MB of packages.
#   scripts/install-chromium.sh            install when missing
#   scripts/install-chromium.sh --check    exit 1 if missing
set -euo pipefail

BIN=/usr/bin/chromium
[[ -x $BIN ]] && exit 0

if [[ ${1-} == --check ]]; then
	echo "install-chromium: $BIN is missing" >&2
	exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-chromium: no apt-get here; install Chromium by hand (the test looks for $BIN, or \$CHROMIUM)" >&2
	exit 1
fi

SUDO=()
if ((EUID != 0)); then
	command -v sudo >/dev/null 2>&1 || {
		echo "install-chromium: not root and no sudo" >&2
		exit 1
	}
	SUDO=(sudo)
fi

echo "install-chromium: installing chromium" >&2
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2

if ! [[ -x $BIN ]]; then
	echo "install-chromium: $BIN still missing after apt-get" >&2
	exit 1
fi
