#!/usr/bin/env bash
# Builds the observability stack's programs from the Go module proxy, pinned,
# into bin/ for this host (or into bin/GOOS-GOARCH/ for another platform),
# each only when the binary there is not already the pinned version for that
# platform. `make run`, `make obs-start` and `make test` all get their stores
# here; nothing comes from a distribution's packages, so a Mac and Linux run
# the same versions.
#
#   name              module (tools/<dir>, a module of its own each)   version
#   victoria-metrics  github.com/VictoriaMetrics/VictoriaMetrics         v1.151.0
#   vmalert           (same)
#   vmagent           (same; config-check runs the scrape config through it)
#   alertmanager      github.com/prometheus/alertmanager                 v0.35.0
#   amtool            (same)
#   promtool          github.com/prometheus/prometheus                   v0.316.0 (Prometheus 3.16.0)
#   jaeger            github.com/jaegertracing/jaeger                    v1.76.0
#   victoria-logs     github.com/VictoriaMetrics/VictoriaLogs            v1.52.1
#
# A binary is current when `go version -m` (which reads any platform's Go
# binary without running it) shows the pinned module version and the target
# GOOS/GOARCH. Each tools/<dir>/go.mod pins its version; the table below must
# agree with it (the build fails loudly when it does not, and
# scripts/installstores_test.go checks it in make unit). To move a pin:
# cd tools/<dir> && go get -tool <module>/<package>@<version>, then the table.
#
#   scripts/install-stores.sh [--target GOOS/GOARCH] [--out DIR] [NAME...]
#     no NAME: all of them. --target: cross-compile (default: this host, into
#     bin/); the output directory is then bin/GOOS-GOARCH unless --out says.
#   scripts/install-stores.sh --list     the names, one a line
# First builds take minutes on 2 cores (README, "The stores"); later runs
# are a `go version -m` per binary.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# name|tools dir|module|version|package|ldflags stamp (what the program's own
# build sets)|prepare (a function that adds to a copy of the module what the
# proxy's module lacks; the copy is bin/.src/<module dir>@<version>)
STORES=(
	"victoria-metrics|victoriametrics|github.com/VictoriaMetrics/VictoriaMetrics|v1.151.0|app/victoria-metrics|-X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=victoria-metrics-v1.151.0"
	"vmalert|victoriametrics|github.com/VictoriaMetrics/VictoriaMetrics|v1.151.0|app/vmalert|-X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=vmalert-v1.151.0"
	"vmagent|victoriametrics|github.com/VictoriaMetrics/VictoriaMetrics|v1.151.0|app/vmagent|-X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=vmagent-v1.151.0"
	"alertmanager|alertmanager|github.com/prometheus/alertmanager|v0.35.0|cmd/alertmanager|-X github.com/prometheus/common/version.Version=0.35.0|alertmanager_ui"
	"amtool|alertmanager|github.com/prometheus/alertmanager|v0.35.0|cmd/amtool|-X github.com/prometheus/common/version.Version=0.35.0"
	"promtool|prometheus|github.com/prometheus/prometheus|v0.316.0|cmd/promtool|-X github.com/prometheus/common/version.Version=3.16.0"
	"jaeger|jaeger|github.com/jaegertracing/jaeger|v1.76.0|cmd/jaeger|-X github.com/jaegertracing/jaeger/internal/version.latestVersion=v1.76.0"
	"victoria-logs|victorialogs|github.com/VictoriaMetrics/VictoriaLogs|v1.52.1|app/victoria-logs|-X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=victoria-logs-v1.52.1"
)

die() { echo "install-stores: $*" >&2; exit 1; }

target="" out="" names=()
while (($#)); do
	case $1 in
	--target) (($# >= 2)) || die "--target needs GOOS/GOARCH"; target=$2; shift 2 ;;
	--out) (($# >= 2)) || die "--out needs a directory"; out=$2; shift 2 ;;
	--list)
		for s in "${STORES[@]}"; do echo "${s%%|*}"; done
		exit 0
		;;
	-h | --help) sed -n '2,31p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option $1" ;;
	*) names+=("$1"); shift ;;
	esac
done

host="$(go env GOHOSTOS)/$(go env GOHOSTARCH)"
target=${target:-$host}
[[ $target == */* ]] || die "--target wants GOOS/GOARCH, not $target"
if [[ -z $out ]]; then
	if [[ $target == "$host" ]]; then out=$ROOT/bin; else out=$ROOT/bin/${target/\//-}; fi
fi
mkdir -p "$out"

# current FILE MODULE VERSION GOOS GOARCH: whether FILE is that module's
# pinned build for that platform.
current() {
	local info
	[[ -x $1 ]] || return 1
	info=$(go version -m "$1" 2>/dev/null) || return 1
	grep -Eq "^[[:space:]]+(mod|dep)[[:space:]]+$2[[:space:]]+$3([[:space:]]|\$)" <<<"$info" || return 1
	grep -Eq "^[[:space:]]+build[[:space:]]+GOOS=$4\$" <<<"$info" || return 1
	grep -Eq "^[[:space:]]+build[[:space:]]+GOARCH=$5\$" <<<"$info"
}

# alertmanager_ui DIR: Alertmanager's ui package embeds ui/app/dist, the
# web UI its release builds with npm and Elm, which the proxy's module does
# not carry ("pattern app/dist: no matching files found"). A one-page
# stand-in (tools/alertmanager/ui-stub.html, gzipped as the UI's own files
# are) takes its place; the API, amtool and every notifier are untouched.
alertmanager_ui() {
	local d
	for d in elm mantine; do
		mkdir -p "$1/ui/app/dist/$d"
		gzip -9n <"$ROOT/tools/alertmanager/ui-stub.html" >"$1/ui/app/dist/$d/index.html.gz"
	done
}

# prepared DIR MODULE VERSION PREPARE: a writable copy of MODULE@VERSION
# from the module cache (downloaded and checked against go.sum first) under
# bin/.src, PREPARE run on it, and the path of a go.mod, beside the copy,
# that is tools/DIR/go.mod with MODULE replaced by the copy.
prepared() {
	local dir=$1 module=$2 version=$3 fn=$4 src cache mod
	src=$ROOT/bin/.src/${module##*/}@$version
	if [[ ! -f $src/.prepared ]]; then
		cache=$(cd "$ROOT/tools/$dir" && go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
		[[ -d $cache ]] || die "no module cache copy of $module@$version"
		rm -rf "$src"
		mkdir -p "${src%/*}"
		cp -R "$cache" "$src"
		chmod -R u+w "$src"
		"$fn" "$src"
		touch "$src/.prepared"
	fi
	mod=$ROOT/bin/.src/$dir.mod
	cp "$ROOT/tools/$dir/go.mod" "$mod"
	cp "$ROOT/tools/$dir/go.sum" "${mod%.mod}.sum"
	go mod edit -modfile="$mod" -replace="$module=$src"
	echo "$mod"
}

want() { # name: whether NAME was asked for (all when none was)
	((${#names[@]} == 0)) && return 0
	local n
	for n in "${names[@]}"; do [[ $n == "$1" ]] && return 0; done
	return 1
}

for n in ${names[@]+"${names[@]}"}; do
	printf '%s\n' "${STORES[@]}" | grep -q "^$n|" || die "no store named $n (--list)"
done

goos=${target%/*} goarch=${target#*/}
for s in "${STORES[@]}"; do
	IFS='|' read -r name dir module version pkg stamp prepare <<<"$s"
	want "$name" || continue
	bin=$out/$name
	current "$bin" "$module" "$version" "$goos" "$goarch" && continue
	# The pin lives in go.mod; a table that disagrees would rebuild forever.
	grep -Eq "^[[:space:]]*(require[[:space:]]+)?$module[[:space:]]+$version([[:space:]]|\$)" "$ROOT/tools/$dir/go.mod" ||
		die "tools/$dir/go.mod does not require $module $version (this script's table and go.mod disagree)"
	began=$SECONDS
	flags=()
	if [[ -n $prepare ]]; then
		flags=(-modfile "$(prepared "$dir" "$module" "$version" "$prepare")")
	fi
	# CGO off: one static binary per platform, and cross-compiling needs no C
	# toolchain for the target.
	(cd "$ROOT/tools/$dir" && CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch \
		go build -trimpath ${flags[@]+"${flags[@]}"} -ldflags "-s -w $stamp" -o "$bin.tmp" "$module/$pkg")
	mv -f "$bin.tmp" "$bin"
	echo "install-stores: built $bin ($module $version, $goos/$goarch) in $((SECONDS - began)) s" >&2
done
