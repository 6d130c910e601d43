#!/usr/bin/env bash
# Runs every fuzz target of the module for a bounded time, one at a time
# (go test -fuzz takes one target of one package per run) (make fuzz):
#
#   scripts/fuzz.sh                   every func Fuzz* in a tracked *_test.go
#   scripts/fuzz.sh FuzzParse ./proxy/confidence   one target
#
# Environment:
#   FUZZTIME   how long each target fuzzes (10s)
#   FUZZFLAGS  more go test flags, e.g. "-parallel 2" on a shared machine
#   GO         the go command (go)
#
# A target that fails (a new crasher) fails the run; go test has written the
# input to the package's testdata/fuzz/<target>/, where it stays as a seed
# once committed: the script lists those files at the end.
set -uo pipefail
cd "$(dirname "$0")/.."

fuzztime=${FUZZTIME:-10s}
gocmd=${GO:-go}
read -r -a extra <<<"${FUZZFLAGS:-}"

# targets prints "<package dir> <target>" per fuzz target.
targets() {
	if [ $# -eq 2 ]; then
		echo "${2#./} $1"
		return
	fi
	local files
	if files=$(git ls-files '*_test.go' 2>/dev/null) && [ -n "$files" ]; then :; else
		files=$(find . -name '*_test.go' -not -path './bin/*' -not -path './_build/*' | sed 's|^\./||')
	fi
	# shellcheck disable=SC2086
	grep -oE '^func Fuzz[A-Za-z0-9_]*\(' $files | sed -E 's|^(.*)/[^/]*:func (Fuzz[A-Za-z0-9_]*)\($|\1 \2|; s|^[^/ ]*:func (Fuzz[A-Za-z0-9_]*)\($|. \1|' | sort
}

# fuzz_once runs one target; its output goes to the terminal and to $1.
fuzz_once() {
	local log=$1 dir=$2 target=$3
	"$gocmd" test -count=1 -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "${extra[@]}" "./$dir" 2>&1 | tee "$log"
	return "${PIPESTATUS[0]}"
}

# coordinator_race is true when a failed run wrote no failing input and its
# only reason is "context deadline exceeded": Go's fuzz coordinator can report
# its own -fuzztime deadline as a failure (go.dev/issue/75804, in go1.26.x,
# fixed in go1.27). A real finding always writes its input to
# testdata/fuzz/<target>/, so such a run is tried once more rather than
# failed; a second failure of any kind fails the target.
coordinator_race() {
	local log=$1 dir=$2 target=$3
	[ -z "$(git status --porcelain --untracked-files=all -- "$dir/testdata/fuzz/$target" 2>/dev/null)" ] &&
		grep -q '^    context deadline exceeded$' "$log" &&
		! grep -qE 'Failing input written|panic:|--- FAIL: .*#' "$log"
}

failed=()
retried=()
n=0
start=$SECONDS
log=$(mktemp)
trap 'rm -f "$log"' EXIT
while read -r dir target; do
	n=$((n + 1))
	echo "== ./$dir $target ($fuzztime)"
	if fuzz_once "$log" "$dir" "$target"; then
		continue
	fi
	if coordinator_race "$log" "$dir" "$target"; then
		echo "== ./$dir $target: no failing input, only the coordinator's deadline (go.dev/issue/75804): once more"
		retried+=("./$dir $target")
		fuzz_once "$log" "$dir" "$target" && continue
	fi
	failed+=("./$dir $target")
done < <(targets "$@")

echo "fuzz: $n targets, ${#failed[@]} failed, ${#retried[@]} retried after the coordinator's deadline, $((SECONDS - start)) s"
if [ ${#retried[@]} -gt 0 ]; then
	printf 'fuzz: retried: %s\n' "${retried[@]}"
fi
if [ "$n" -eq 0 ]; then
	echo "fuzz: no fuzz target found" >&2
	exit 1
fi
if [ ${#failed[@]} -gt 0 ]; then
	printf 'fuzz: failed: %s\n' "${failed[@]}" >&2
	new=$(git status --porcelain --untracked-files=all -- '*/testdata/fuzz/*' 2>/dev/null)
	if [ -n "$new" ]; then
		echo "fuzz: inputs to fix and commit as seeds:" >&2
		echo "$new" >&2
	fi
	exit 1
fi
