#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/mpi-bench.sh [BUILD_DIR] [SCALE]
#
# MPI over spinnic against what a user has without it, all in one run, on
# 2 ranks of the cached Open MPI build (make openmpi):
#   spinnic        pml cm + mtl portals4, collectives on the host (libnbc)
#   spinnic+coll   the same with coll portals4 (triggered operations)
#   tcp            pml ob1 + btl tcp on loopback (a commodity NIC today)
#   vader          pml ob1 + btl vader, shared memory (the upper bound)
# Figures (test/mpi/mpi_bench.c): ping-pong latency (8 B, 1 KiB), bandwidth
# (64 KiB, 1 MiB), 8-B message rate, 8-B allreduce latency, overlap of an
# Iallreduce with computation. Prints the table and the ratios of spinnic
# to tcp and to vader from this run. spinnic runs `--virtual 2`, rank r on
# node r. SCALE (1) multiplies the iterations. SPINNIC_ARGS: more spinnic
# options (e.g. "--idle-sleep-us 0" to busy-poll); MPI_BENCH_OUT=DIR keeps
# each configuration's raw output.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
scale=${2:-1}
case $build in /*) ;; *) build=$PWD/$build ;; esac
prefix=$("$root/tools/openmpi-build.sh" --prefix)
[ -f "$prefix/.spinnic-build" ] || {
	echo "mpi-bench: no Open MPI build at $prefix: make openmpi" >&2; exit 1; }
spinnic=$build/app/spinnic/spinnic
[ -x "$spinnic" ] || { echo "mpi-bench: $spinnic missing: make build" >&2; exit 1; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/spinnic-mpibench-XXXXXX")
spid=
cleanup() {
	if [ -n "$spid" ] && kill -0 "$spid" 2>/dev/null; then
		kill -TERM "$spid" 2>/dev/null || true
		sleep 1
		kill -KILL "$spid" 2>/dev/null || true
	fi
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

"$prefix/bin/mpicc" -O2 -o "$dir/mpi_bench" "$root/test/mpi/mpi_bench.c"
# MPI_BENCH_CPUS=LIST: the ranks on those CPUs (taskset), in every
# configuration alike (spinnic's lcore is on CPU 0); default all CPUs
# (on 2 cores, two ranks on one CPU only measure the scheduler)
rank_cpus=${MPI_BENCH_CPUS:-0-$(($(nproc) - 1))}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LD_LIBRARY_PATH=$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
run() {
	local name=$1
	shift
	echo "mpi-bench: $name: mpirun -np 2 $*" >&2
	timeout 600 taskset -c "$rank_cpus" "$prefix/bin/mpirun" -np 2 --oversubscribe --bind-to none \
		-x SPINNIC_SOCKET="$dir/s/node%n.sock" -x LD_LIBRARY_PATH \
		"$@" "$dir/mpi_bench" "$scale" >"$dir/$name.out" 2>&1 || {
		echo "mpi-bench: $name failed:" >&2
		cat "$dir/$name.out" >&2
		return 1
	}
}
start_spinnic() {
	mkdir -m 0700 "$dir/s"
	# shellcheck disable=SC2086
	"$spinnic" -- --virtual 2 --socket-dir "$dir/s" ${SPINNIC_ARGS:-} >"$dir/spinnic.log" 2>&1 &
	spid=$!
	i=0
	until grep -q "spinnic: ready" "$dir/spinnic.log" 2>/dev/null; do
		if ! kill -0 "$spid" 2>/dev/null || [ $i -ge 600 ]; then
			echo "mpi-bench: spinnic did not start:" >&2
			cat "$dir/spinnic.log" >&2
			exit 1
		fi
		sleep 0.1
		i=$((i + 1))
	done
}
configs="spinnic spinnic+coll tcp vader"
# without spinnic running first (its lcore would take a CPU from them),
# then spinnic's two configurations
run tcp --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo --mca osc ^portals4 \
	--mca coll basic,libnbc,self
run vader --mca pml ob1 --mca btl vader,self --mca osc ^portals4 --mca coll basic,libnbc,self
start_spinnic
run spinnic --mca pml cm --mca mtl portals4 --mca coll basic,libnbc,self
run spinnic+coll --mca pml cm --mca mtl portals4 \
	--mca coll portals4,basic,libnbc,self

val() { awk -v k="$2" '$1 == k { print $2 }' "$dir/$1.out"; }
keys="lat_8 lat_1024 bw_65536 bw_1048576 rate_8 allreduce_8 overlap"
printf "%-12s" figure
for c in $configs; do printf " %13s" "$c"; done
printf " %9s %9s\n" "sp/tcp" "sp/vader"
for k in $keys; do
	unit=$(awk -v k="$k" '$1 == k { print $3 }' "$dir/spinnic.out")
	printf "%-12s" "$k"
	for c in $configs; do printf " %13s" "$(val "$c" "$k")"; done
	s=$(val spinnic "$k")
	[ "$k" = overlap ] && s=$(val spinnic+coll "$k")
	t=$(val tcp "$k")
	v=$(val vader "$k")
	awk -v s="$s" -v t="$t" -v v="$v" -v u="$unit" 'BEGIN {
		rt = "-"; rv = "-"
		if (t + 0 > 0) rt = sprintf("%.2f", s / t)
		if (v + 0 > 0) rv = sprintf("%.2f", s / v)
		printf " %9s %9s  %s\n", rt, rv, u }'
done
echo "(ratios: spinnic's figure over tcp's and vader's; overlap's with coll portals4;"
echo " for latencies lower is better, for bw/rate/overlap higher)"
for c in $configs; do
	echo "  $c: $(grep '^overlap' "$dir/$c.out")"
done
if [ -n "${MPI_BENCH_OUT:-}" ]; then
	mkdir -p "$MPI_BENCH_OUT"
	for c in $configs; do cp "$dir/$c.out" "$MPI_BENCH_OUT/$c.out"; done
fi
