#!/usr/bin/env bash
# Builds Jaeger v2 (the all-in-one `jaeger` binary) from the Go module proxy
# into bin/jaeger, when it is not there yet. Jaeger is a program, not a
# library of this module: it is fetched as a tool of a module of its own
# (tools/jaeger), so its dependencies never mix with the collector's.
# About 5 minutes on 2 cores the first time; later runs reuse Go's cache.
#   scripts/install-jaeger.sh            build bin/jaeger if missing
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=v1.76.0
OUT=$PWD/bin/jaeger
if [[ -x $OUT ]] && [[ $("$OUT" version 2>/dev/null | grep -o "$VERSION" | head -1) == "$VERSION" ]]; then
	exit 0
fi
mkdir -p bin
cd tools/jaeger
# go.mod pins the version; `go get -tool` records the tool the first time.
if ! grep -q 'tool github.com/jaegertracing/jaeger/cmd/jaeger' go.mod; then
	go get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$VERSION"
fi
# The version stamp Jaeger's own build sets, so `jaeger version` says it.
CGO_ENABLED=0 go build -trimpath -o "$OUT" \
	-ldflags "-s -w -X github.com/jaegertracing/jaeger/internal/version.latestVersion=$VERSION" \
	github.com/jaegertracing/jaeger/cmd/jaeger
echo "install-jaeger: built $OUT ($VERSION)"
