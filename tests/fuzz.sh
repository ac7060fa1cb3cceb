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
#
# The budget is real: SECONDS is the fuzzing time, not counting the build of
# the instrumented test binary (timed and shown apart). Go minimises every
# input that finds new coverage for up to 60 s by default (-fuzzminimizetime),
# and that time is not part of -fuzztime: an expensive target such as
# FuzzCExports spent whole minutes minimising and tried a few dozen inputs.
# Short runs (under 60 s) therefore do not minimise (-fuzzminimizetime 0:
# FuzzCExports went from 36 inputs in 5 s to about 2,600; a failing input is
# still written, just not shrunk), long runs minimise for at most SECONDS/5
# (up to Go's 60 s), and a target that
# still runs past 2*SECONDS+30 s of fuzzing is stopped and counted as failed.
# Each target reports its build time, fuzzing time and inputs tried (execs);
# with TOOLSELECT_REPORT set, a step file for internal/tools/testreport goes there.
set -uo pipefail

secs=${1:-20}
filter=${FUZZ_FILTER:-.}
parallel=${FUZZ_PARALLEL:-1}
cd "$(dirname "$0")/.."
export CGO_ENABLED=${CGO_ENABLED:-1}

# Go before 1.27 can fail a -fuzztime run that found nothing: at the end of
# the time the coordinator may read the parent context's deadline before its
# child is cancelled and report "context deadline exceeded" (go.dev/issue/75804,
# fixed in Go 1.27 by CL 774140; no 1.26.x release carries it). CI failed on it
# twice in a row for one target. So the fuzzing, and only the fuzzing, runs on
# the first Go release with the fix, which the go command fetches from the
# module proxy like a module (about 76 MB, once per machine). FUZZ_GOTOOLCHAIN
# picks another; "local" keeps the machine's own Go.
fuzz_toolchain=${FUZZ_GOTOOLCHAIN:-go1.27.3}
if [ "$fuzz_toolchain" != local ]; then
	if GOTOOLCHAIN=$fuzz_toolchain go version >/dev/null 2>&1; then
		export GOTOOLCHAIN=$fuzz_toolchain
	else
		echo "fuzz.sh: could not fetch $fuzz_toolchain; fuzzing with $(go env GOVERSION), which has go.dev/issue/75804" >&2
	fi
fi
echo "fuzz.sh: fuzzing with $(go env GOVERSION)"

run_start=$(date +%s)
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

minimize=$((secs / 5))
[ "$secs" -lt 60 ] && minimize=0
[ "$minimize" -gt 60 ] && minimize=60
overrun=$((2 * secs + 30))

# run_target runs one go test -fuzz in the background and waits for it,
# printing progress every 30 s; it sets rc, build_s and fuzz_s.
run_target() {
	local pkg=$1 target=$2 log=$3
	local t0 now fuzz_start=0 last=0
	t0=$(date +%s)
	go test -tags cabifuzz -run '^$' -fuzz "^${target}\$" -fuzztime "${secs}s" -fuzzminimizetime "${minimize}s" \
		-parallel "$parallel" "./$pkg" "${cache_args[@]}" >"$log" 2>&1 &
	local pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		now=$(date +%s)
		if [ "$fuzz_start" -eq 0 ] && grep -q '^fuzz: elapsed' "$log"; then
			fuzz_start=$now
		fi
		if [ "$fuzz_start" -gt 0 ] && [ $((now - fuzz_start)) -gt "$overrun" ]; then
			echo "fuzz.sh: $pkg $target ran past ${overrun}s of fuzzing; stopping it" | tee -a "$log"
			kill -INT "$pid" 2>/dev/null
			sleep 5
			kill -KILL "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			rc=124
			build_s=$((fuzz_start - t0)) fuzz_s=$((now - fuzz_start))
			return
		fi
		if [ $((now - t0 - last)) -ge 30 ]; then
			last=$((now - t0))
			if [ "$fuzz_start" -eq 0 ]; then
				echo "fuzz.sh:   ... ${last}s, building the instrumented test binary"
			else
				echo "fuzz.sh:   ... ${last}s, $(grep -oE 'execs: [0-9]+' "$log" | tail -1)"
			fi
		fi
	done
	wait "$pid"
	rc=$?
	now=$(date +%s)
	[ "$fuzz_start" -eq 0 ] && fuzz_start=$now
	build_s=$((fuzz_start - t0)) fuzz_s=$((now - fuzz_start))
}

echo "fuzz.sh: ${#specs[@]} targets, ${secs}s of fuzzing each (minimising: ${minimize}s per input, 0 is off)"
failed=()
summary=()
total_execs=0
n=0
for spec in "${specs[@]}"; do
	pkg=${spec%%:*}
	target=${spec##*:}
	n=$((n + 1))
	echo "fuzz.sh: [$n/${#specs[@]}] $pkg $target"
	log=$(mktemp)
	start=$(date +%s)
	note=""
	for attempt in 1 2 3; do
		run_target "$pkg" "$target" "$log"
		# A run that ends with "context deadline exceeded" and no failing
		# input is the engine's own deadline (go.dev/issue/75804 above, or
		# the baseline pass outlasting a short budget), not the code under
		# test: it is tried again, up to three runs in all. Any run that
		# names a failing input or a panic is a failure at once.
		if [ $rc -ne 0 ] && [ $attempt -lt 3 ] && grep -q 'context deadline exceeded' "$log" &&
			! grep -qE 'testdata/fuzz/|panic:|Failing input' "$log"; then
			note=" (retried $attempt time(s): the engine's deadline with no failing input)"
			continue
		fi
		break
	done
	took=$(($(date +%s) - start))
	execs=$(grep -oE 'execs: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || true)
	total_execs=$((total_execs + ${execs:-0}))
	if [ $rc -eq 0 ]; then
		summary+=("$(printf '%-16s %-28s ok    %4ss (build %ss, fuzz %ss)  %s execs%s' "$pkg" "$target" "$took" "$build_s" "$fuzz_s" "${execs:-?}" "$note")")
	else
		summary+=("$(printf '%-16s %-28s FAIL  %4ss (build %ss, fuzz %ss)  %s execs' "$pkg" "$target" "$took" "$build_s" "$fuzz_s" "${execs:-?}")")
		failed+=("$spec")
		echo "---- $spec failed:"
		grep -vE '^fuzz: elapsed' "$log" | tail -40
		grep -oE 'testdata/fuzz/[A-Za-z0-9_]+/[0-9a-f]+' "$log" | sort -u | sed "s|^|    failing input: $pkg/|"
	fi
	rm -f "$log"
done

printf '%s\n' "${summary[@]}"
if [ -n "${TOOLSELECT_REPORT:-}" ]; then
	{
		printf 'count\t%d\t%d\t0\n' $((${#specs[@]} - ${#failed[@]})) ${#failed[@]}
		printf 'time\t%d\n' $(($(date +%s) - run_start))
		printf 'note\t%d targets, %ss of fuzzing each, %d inputs tried in all\n' ${#specs[@]} "$secs" "$total_execs"
		for f in "${failed[@]}"; do printf 'fail\t%s\n' "$f"; done
	} >"$TOOLSELECT_REPORT"
fi
# The last line is the plain "N passed, N failed" form test reports end with.
if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz.sh: ${#failed[@]} target(s) failed: ${failed[*]}" >&2
	echo "fuzz: $((${#specs[@]} - ${#failed[@]})) passed, ${#failed[@]} failed"
	exit 1
fi
echo "fuzz: ${#specs[@]} passed, 0 failed"
