#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Build the libFuzzer targets with clang (ASan + UBSan) and run each for a
# bounded time from its seed corpus (DESIGN §11).
#   test/fuzz/run.sh [BUILD_DIR [SECONDS [TARGET...]]]
# BUILD_DIR (default build-fuzz) is a separate clang build; SECONDS
# (default 60) per target. New inputs go to BUILD_DIR/fuzz-corpus/<target>
# (the committed seeds are not modified); crashes to
# BUILD_DIR/fuzz-crashes/<target>/. Exit 1 if any target failed.
set -eu

src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build-fuzz}
secs=${2:-60}
[ $# -gt 2 ] && shift 2 || set --
targets=${*:-wire ctrl cmd ddt_parse ddt_blob reasm ddt_calib}
jobs=${FUZZ_JOBS:-2}

command -v clang >/dev/null || { echo "run.sh: clang not found (make deps)" >&2; exit 77; }
if [ ! -f "$build/build.ninja" ]; then
	CC=clang meson setup "$build" "$src" \
		-Dbuildtype=debugoptimized \
		-Db_sanitize=address,undefined -Db_lundef=false \
		-Dc_args=-fsanitize=fuzzer-no-link \
		-Dtests=true >"$build.setup.log" 2>&1 ||
		{ cat "$build.setup.log" >&2; exit 1; }
fi
bins=
for t in $targets; do bins="$bins test/fuzz/fuzz_$t"; done
# shellcheck disable=SC2086
ninja -C "$build" -j "$jobs" $bins

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
fail=0
for t in $targets; do
	corpus="$build/fuzz-corpus/$t"
	crashes="$build/fuzz-crashes/$t"
	mkdir -p "$corpus" "$crashes"
	echo "== fuzz_$t: ${secs}s"
	if ! "$build/test/fuzz/fuzz_$t" -max_total_time="$secs" \
		-print_final_stats=1 -max_len=65536 -timeout=10 \
		-artifact_prefix="$crashes/" \
		"$corpus" "$src/test/fuzz/corpus/$t" \
		>"$build/fuzz-$t.log" 2>&1; then
		echo "fuzz_$t: FAILED, see $build/fuzz-$t.log and $crashes/" >&2
		fail=1
	fi
	grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::average_exec_per_sec)' \
		"$build/fuzz-$t.log" || tail -5 "$build/fuzz-$t.log"
done
exit $fail
