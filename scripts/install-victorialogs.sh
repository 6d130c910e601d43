#!/usr/bin/env bash
# Builds VictoriaLogs (the `victoria-logs` single-node binary, the obs
# stack's log store) from the Go module proxy into bin/victoria-logs, when it
# is not there yet. Like Jaeger it is a tool of a module of its own
# (tools/victorialogs), so its dependencies never mix with the collector's.
# Debian packages no VictoriaLogs. About a minute on 2 cores the first time.
#   scripts/install-victorialogs.sh      build bin/victoria-logs if missing
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=v1.52.1
OUT=$PWD/bin/victoria-logs
if [[ -x $OUT ]] && "$OUT" -version 2>/dev/null | grep -q -- "-$VERSION-\|$VERSION\$"; then
	exit 0
fi
mkdir -p bin
cd tools/victorialogs
# The version stamp VictoriaLogs' own Makefile sets (lib/buildinfo), so
# `victoria-logs -version` says it.
CGO_ENABLED=0 go build -trimpath -o "$OUT" \
	-ldflags "-s -w -X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=victoria-logs-$VERSION" \
	github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs
echo "install-victorialogs: built $OUT ($VERSION)"
