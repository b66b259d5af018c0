#!/usr/bin/env bash
# fuzz.sh runs every Go fuzz target in the module for a short time and fails if any of them
# finds a crash. Targets are discovered, not listed by hand: a new `func FuzzX(f *testing.F)`
# anywhere is fuzzed from its first commit.
#
#   FUZZTIME=15s   time per target (any `go test -fuzztime` value: 30s, 1m, 500x)
#   FUZZ_LIST=1    only list the targets and the total time they would take
#
# A crash leaves its input under <package>/testdata/fuzz/<Target>/; commit that file with the
# fix, and the input becomes a regression test that plain `go test` runs.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime="${FUZZTIME:-15s}"

# `go test -list` prints a package's matching test names, then its "ok <pkg>" line.
targets=()
names=()
broken=()
while IFS= read -r line; do
	case "$line" in
	Fuzz*) names+=("$line") ;;
	ok*)
		pkg=$(awk '{print $2}' <<<"$line")
		for n in "${names[@]+"${names[@]}"}"; do targets+=("$pkg $n"); done
		names=()
		;;
	FAIL*) broken+=("$line"); names=() ;;
	*) names=() ;;
	esac
done < <(go test -list '^Fuzz' ./... 2>&1)
if [[ ${#broken[@]} -gt 0 ]]; then
	# A package that does not build hides its targets: that is a failure, not a skip.
	echo "fuzz.sh: cannot list the targets of:" >&2
	printf '  %s\n' "${broken[@]}" >&2
	exit 1
fi

n=${#targets[@]}
echo "fuzz.sh: $n fuzz targets, $fuzztime each"
for t in "${targets[@]+"${targets[@]}"}"; do echo "  $t"; done
if [[ "${FUZZ_LIST:-}" == 1 ]]; then
	exit 0
fi
if [[ $n -eq 0 ]]; then
	echo "fuzz.sh: no fuzz targets found" >&2
	exit 1
fi

# crashers lists the failing inputs saved for a target (none when its folder is absent).
crashers() {
	local dir
	dir=$(go list -f '{{.Dir}}' "$1")/testdata/fuzz/$2
	if [[ -d "$dir" ]]; then ls "$dir"; fi
}

# Go 1.26's fuzz coordinator can fail a target with a bare "context deadline exceeded" when
# -fuzztime ends while a worker is busy, having found nothing (go.dev/issue/75804, fixed in Go
# 1.27). Such a run saves no input; it is run again, up to twice. A run that saves an input, or
# fails in any other way, fails the script at once.
failed=()
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	for attempt in 1 2 3; do
		if [[ $attempt -eq 1 ]]; then echo "--- $name ($pkg)"; else echo "--- $name ($pkg), run $attempt"; fi
		before=$(crashers "$pkg" "$name")
		out=$(mktemp)
		if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg" 2>&1 | tee "$out"; [[ ${PIPESTATUS[0]} -eq 0 ]]; then
			rm -f "$out"
			break
		fi
		after=$(crashers "$pkg" "$name")
		if [[ "$before" == "$after" ]] && grep -q '^    context deadline exceeded$' "$out" && [[ $attempt -lt 3 ]]; then
			echo "fuzz.sh: $name ended on the coordinator's deadline race with no input saved; running it again"
			rm -f "$out"
			continue
		fi
		rm -f "$out"
		failed+=("$t")
		break
	done
done
if [[ ${#failed[@]} -gt 0 ]]; then
	echo "fuzz.sh: ${#failed[@]} of $n targets failed:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	echo "fuzz.sh: the failing inputs are under <package>/testdata/fuzz/<Target>/" >&2
	exit 1
fi
echo "fuzz.sh: all $n targets ran $fuzztime without a crash"
