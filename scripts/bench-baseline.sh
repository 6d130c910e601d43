#!/usr/bin/env bash
# Builds the collector at another git ref, for make bench BASELINE=<ref>:
# a detached git worktree of the ref in a temporary directory, ocb from
# ./bin (the same pinned builder; make tools otherwise) and that ref's own
# Makefile and
# builder-config.yaml, so the build is what `make build` made at that ref.
# Prints the built binary's path (its repository, with the ref's config/,
# is two levels up: mlxperf -baseline-repo defaults to it). A build of the
# same commit is kept and reused.
#   scripts/bench-baseline.sh main
#   scripts/bench-baseline.sh 8bffc18
set -euo pipefail

ref=${1:?usage: scripts/bench-baseline.sh <git ref>}
repo=$(git rev-parse --show-toplevel)
sha=$(git -C "$repo" rev-parse --verify "$ref^{commit}")
wt=${TMPDIR:-/tmp}/mlx-otelcol-baseline-${sha:0:12}
bin=$wt/_build/mlx-otelcol

if [[ -x $bin && $(git -C "$wt" rev-parse HEAD 2>/dev/null) == "$sha" ]]; then
	echo "$bin"
	exit 0
fi
if [[ -d $wt ]]; then
	git -C "$repo" worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"
fi
git -C "$repo" worktree prune
git -C "$repo" worktree add --detach "$wt" "$sha" >&2
# ocb is pinned (OCB_VERSION) and the same at every ref: copied, not
# rebuilt; make build needs nothing else from bin/.
mkdir -p "$wt/bin"
if [[ -x $repo/bin/builder ]]; then
	cp -an "$repo/bin/builder" "$wt/bin/"
fi
echo "bench-baseline: building the collector at $ref ($sha) in $wt" >&2
make -C "$wt" build >&2
echo "$bin"
