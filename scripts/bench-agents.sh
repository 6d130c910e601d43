#!/usr/bin/env bash
# Fetches the original Python stack's agents (github.com/hellodk/mlx-oc,
# MIT, cluster/) at a pinned commit, for make bench's footprint, and prints
# the directory holding them. MLX_OC_GIT, when set, is a local clone (or its
# git directory) to take them from instead of GitHub. Their one import
# outside the standard library, prometheus_client, comes from Debian
# (scripts/install-deps.sh --bench).
#   scripts/bench-agents.sh              -> .../cluster
set -euo pipefail

# The last commit of hellodk/mlx-oc when these figures were first taken.
COMMIT=2a438a85a10e2d6de60c4532d031af85f124afa2
dest=${TMPDIR:-/tmp}/mlx-oc-${COMMIT:0:12}
if [[ -f $dest/cluster/mlx_metrics_proxy.py ]]; then
	echo "$dest/cluster"
	exit 0
fi
src=${MLX_OC_GIT:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [[ -z $src ]]; then
	timeout 120 git clone --quiet --filter=blob:none --no-checkout https://github.com/hellodk/mlx-oc "$tmp/clone" >&2 || {
		echo "bench-agents: cannot clone github.com/hellodk/mlx-oc; set MLX_OC_GIT to a local clone" >&2
		exit 1
	}
	src=$tmp/clone
fi
mkdir -p "$tmp/out"
git -C "$src" archive "$COMMIT" cluster | tar -x -C "$tmp/out"
mkdir -p "$(dirname "$dest")"
rm -rf "$dest"
mv "$tmp/out" "$dest"
echo "$dest/cluster"
