#!/bin/sh
# fleet-old-build.sh BUILD_DIR OUT VERSION
#
# The simulated fleet's node "on an older version": the collector ocb
# generated into BUILD_DIR (make build's _build/), linked again with its
# dist.version replaced by VERSION, into OUT. mlx_agent_info's version label
# is BuildInfo.Version, which ocb writes into the generated main.go from
# builder-config.yaml's dist.version; so this binary is what ocb makes from
# a builder-config.yaml that says VERSION, byte for byte in every component.
# Its commit label is the commit it is built from, stamped as make build
# does: only the version is older. A checkout of a really older commit is
# no substitute: builds from before the fleet contract serve no
# mlx_agent_info at all, and would read as no data, not as an old version.
set -eu
build=$1 out=$2 version=$3
case $version in *[!0-9.]*|'') echo "fleet-old-build: version must be N.N.N, got '$version'" >&2; exit 2 ;; esac
[ -f "$build/main.go" ] || { echo "fleet-old-build: no $build/main.go: make build first" >&2; exit 1; }
grep -q '^		Version:     "' "$build/main.go" || { echo "fleet-old-build: $build/main.go sets no BuildInfo Version" >&2; exit 1; }
src=$(mktemp -d "$build/old.XXXXXX")
trap 'rm -rf "$src"' EXIT
for f in "$build"/*.go "$build/go.mod" "$build/go.sum"; do cp "$f" "$src/"; done
# The generated module replaces the distribution with "..": one level deeper now.
sed -i 's#=> \.\.$#=> ../..#' "$src/go.mod"
sed -i "s#^		Version:     \".*\",#		Version:     \"$version\",#" "$src/main.go"
root=$(cd "$build/.." && pwd)
case $out in /*) ;; *) out=$root/$out ;; esac
commit=$(cd "$root" && c=$(git rev-parse --short=12 HEAD 2>/dev/null) && { git diff --quiet HEAD -- 2>/dev/null || c=$c-dirty; echo "$c"; })
(cd "$src" && go build -trimpath -ldflags "-s -w -X github.com/mlx-otelcol/mlx-otelcol/internal/fleet.commit=$commit" -o "$out" .)
"$out" --version
