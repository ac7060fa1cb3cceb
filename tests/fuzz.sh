#!/usr/bin/env bash
# tests/fuzz.sh [SECONDS] - run every Go fuzz target for SECONDS each (default 20), one after another.
#
#   bash tests/fuzz.sh            # CI: 20 s per target
#   bash tests/fuzz.sh 6          # make test: about 1.5 minutes in all
#   bash tests/fuzz.sh 600        # make reliability: 10 minutes per target
#
# Targets are found, not listed: every `func FuzzX(f *testing.F)` in a _test.go
# file of this module. FUZZ_FILTER (an extended regex on "pkg:FuzzX") picks
# some; FUZZ_PARALLEL sets -parallel (default 1, the machine is shared).
# A failing input is written by Go to PKG/testdata/fuzz/FuzzX/ and named in
# the output: fix the bug and commit the file, it then runs as a regression
# test in every `go test`. The exit status is non-zero when any target failed.
set -uo pipefail

secs=${1:-20}
filter=${FUZZ_FILTER:-.}
parallel=${FUZZ_PARALLEL:-1}
cd "$(dirname "$0")/.."
export CGO_ENABLED=${CGO_ENABLED:-1}

specs=()
while IFS= read -r file; do
	dir=$(dirname "$file")
	dir=${dir#./}
	for fn in $(grep -oE '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]*).*/\1/'); do
		spec="$dir:$fn"
		if [[ $spec =~ $filter ]]; then
			specs+=("$spec")
		fi
	done
done < <(git ls-files --cached --others --exclude-standard -- '*_test.go' 2>/dev/null | sort ||
	find . -name '*_test.go' -not -path './.cache/*' | sort)

if [ ${#specs[@]} -eq 0 ]; then
	echo "fuzz.sh: no fuzz target matches '$filter'" >&2
	exit 2
fi

# -fuzztime includes the baseline pass over the whole corpus. Go's cache keeps
# every input earlier runs found (hundreds after a 10-minute run), which alone
# can take longer than a few seconds on a loaded machine and end the run with
# "context deadline exceeded". Short runs therefore start from the committed
# seeds only, in a throwaway cache, as on a fresh CI machine; long runs use
# Go's shared cache so what they find accumulates.
cache_args=()
if [ "$secs" -lt 60 ] && [ -z "${FUZZ_SHARED_CACHE:-}" ]; then
	fuzz_cache=$(mktemp -d)
	trap 'rm -rf "$fuzz_cache"' EXIT
	cache_args=(-args -test.fuzzcachedir="$fuzz_cache")
fi

echo "fuzz.sh: ${#specs[@]} targets, ${secs}s each"
failed=()
summary=()
for spec in "${specs[@]}"; do
	pkg=${spec%%:*}
	target=${spec##*:}
	log=$(mktemp)
	start=$(date +%s)
	note=""
	for attempt in 1 2; do
		go test -tags cabifuzz -run '^$' -fuzz "^${target}\$" -fuzztime "${secs}s" -parallel "$parallel" "./$pkg" "${cache_args[@]}" >"$log" 2>&1
		rc=$?
		# On a loaded machine a short run can end with "context deadline
		# exceeded" and no failing input: the fuzzing engine ran out of its
		# time, the code under test did not fail. Such a run is tried once
		# more; any run that names a failing input is a failure at once.
		if [ $rc -ne 0 ] && [ $attempt -eq 1 ] && grep -q 'context deadline exceeded' "$log" &&
			! grep -qE 'testdata/fuzz/|panic:|Failing input' "$log"; then
			note=" (retried: the first run hit the engine's deadline with no failing input)"
			continue
		fi
		break
	done
	took=$(($(date +%s) - start))
	execs=$(grep -oE 'execs: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || true)
	if [ $rc -eq 0 ]; then
		summary+=("$(printf '%-16s %-28s ok    %4ss  %s execs%s' "$pkg" "$target" "$took" "${execs:-?}" "$note")")
	else
		summary+=("$(printf '%-16s %-28s FAIL  %4ss' "$pkg" "$target" "$took")")
		failed+=("$spec")
		echo "---- $spec failed:"
		grep -vE '^fuzz: elapsed' "$log" | tail -40
		grep -oE 'testdata/fuzz/[A-Za-z0-9_]+/[0-9a-f]+' "$log" | sort -u | sed "s|^|    failing input: $pkg/|"
	fi
	rm -f "$log"
done

printf '%s\n' "${summary[@]}"
# The last line is the plain "N passed, N failed" form test reports end with.
if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz.sh: ${#failed[@]} target(s) failed: ${failed[*]}" >&2
	echo "fuzz: $((${#specs[@]} - ${#failed[@]})) passed, ${#failed[@]} failed"
	exit 1
fi
echo "fuzz: ${#specs[@]} passed, 0 failed"
