#!/usr/bin/env bash
# Installs the Debian tools make test needs besides the stores, when any is
# missing:
#   systemd                  systemd-analyze (deploy/'s test verifies the
#                            service unit make install writes)
#   iproute2                 ip (the two-node test's network namespaces)
# The stores (VictoriaMetrics, vmalert, vmagent, Alertmanager, amtool,
# promtool, Jaeger, VictoriaLogs) are not Debian's: scripts/install-stores.sh
# builds them, pinned, from the Go module proxy.
# Idempotent and silent when everything is there. Runs apt-get as root, or
# through sudo otherwise. The packages try to start their services, which a
# container refuses; that is harmless (policy-rc.d is not touched).
#   scripts/install-deps.sh            install what is missing
#   scripts/install-deps.sh --check    exit 1 (and list them) if any is missing
#   scripts/install-deps.sh --bench    the same for make bench's own:
#                                      nginx-light (nginx, the no-telemetry
#                                      baseline), python3 and
#                                      python3-prometheus-client (the
#                                      original Python agents' one import
#                                      outside the standard library)
set -euo pipefail

# package:binary that proves it is installed (package:py:module: Debian's
# python3 imports the module)
WANT=(
	"systemd:systemd-analyze"
	"iproute2:ip"
)
if [[ ${1-} == --bench ]]; then
	WANT=("nginx-light:nginx" "python3:python3" "python3-prometheus-client:py:prometheus_client")
	shift
fi

# have BINARY or have py:MODULE
have() {
	if [[ $1 == py:* ]]; then
		[[ -x /usr/bin/python3 ]] && /usr/bin/python3 -c "import ${1#py:}" 2>/dev/null
		return
	fi
	command -v "$1" >/dev/null 2>&1 || [[ -x /usr/bin/$1 || -x /usr/sbin/$1 ]]
}

missing=()
for w in "${WANT[@]}"; do
	pkg=${w%%:*} bin=${w#*:}
	if ! have "$bin"; then
		[[ " ${missing[*]-} " == *" $pkg "* ]] || missing+=("$pkg")
	fi
done

((${#missing[@]} == 0)) && exit 0

if [[ ${1-} == --check ]]; then
	echo "install-deps: missing packages: ${missing[*]}" >&2
	exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-deps: missing ${missing[*]} and no apt-get here; install them by hand" >&2
	exit 1
fi

SUDO=()
if ((EUID != 0)); then
	command -v sudo >/dev/null 2>&1 || {
		echo "install-deps: missing ${missing[*]}; not root and no sudo" >&2
		exit 1
	}
	SUDO=(sudo)
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# A package whose service cannot start in a container can leave dpkg with a
# non-zero status although the binaries are installed: judge by the binaries.
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}" >&2 || true

still=()
for w in "${WANT[@]}"; do
	bin=${w#*:}
	have "$bin" || still+=("$bin")
done
if ((${#still[@]})); then
	echo "install-deps: still missing after apt-get: ${still[*]}" >&2
	exit 1
fi
