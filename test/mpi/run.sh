#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# test/mpi/run.sh BUILD_DIR SOURCE_DIR PROGRAM NP CONFIG [NODES]
#
# One MPI test of suite `mpi`: compiles test/mpi/PROGRAM.c with the cached
# Open MPI (tools/openmpi-build.sh; exit 77 when it is not built), starts
# `spinnic --virtual NODES` (default 4), runs PROGRAM on NP ranks with
# Open MPI's own mpirun, each rank on node (local rank mod NODES) through
# SPINNIC_SOCKET=DIR/node%n.sock, then stops spinnic and checks that it
# exited cleanly with nothing left (clients, regions, MEs, NIC memory,
# contexts, mbufs) on any node.
#
# CONFIG: the Open MPI components
#   mtl   --mca pml cm --mca mtl portals4           (matching on the NIC)
#   btl   --mca pml ob1 --mca btl portals4,self     (ob1 over btl/portals4)
#   osc   mtl + --mca osc portals4
#   coll  mtl + --mca coll portals4,... (the run must show coll/portals4
#         selected on MPI_COMM_WORLD, and triggered operations on the NICs)
set -euo pipefail

build=$1 src=$2 prog=$3 np=$4 config=$5 nodes=${6:-4}
case $build in /*) ;; *) build=$PWD/$build ;; esac
prefix=$("$src/tools/openmpi-build.sh" --prefix)
if [ ! -f "$prefix/.spinnic-build" ] || [ ! -x "$prefix/bin/mpicc" ]; then
	echo "SKIP: no Open MPI build at $prefix (make openmpi)"
	exit 77
fi
spinnic=$build/app/spinnic/spinnic
[ -x "$spinnic" ] || { echo "$spinnic is missing" >&2; exit 1; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/spinnic-mpi-XXXXXX")
spid=
# $spid is timeout's pid: TERM reaches spinnic through it (KILL would not)
cleanup() {
	if [ -n "$spid" ] && kill -0 "$spid" 2>/dev/null; then
		kill -TERM "$spid" 2>/dev/null || true
		for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
			kill -0 "$spid" 2>/dev/null || break
			sleep 0.2
		done
		kill -KILL "$spid" 2>/dev/null || true
	fi
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

"$prefix/bin/mpicc" -O2 -g -Wall -Werror -o "$dir/$prog" "$src/test/mpi/$prog.c"

mkdir -m 0700 "$dir/s"
# spinnic: up to 3 starts (hugepages/memory may be briefly taken by other
# tests on the machine); still no start for lack of resources: skip
start_spinnic() {
	timeout 900 "$spinnic" -- --virtual "$nodes" --socket-dir "$dir/s" \
		>"$dir/spinnic.log" 2>&1 &
	spid=$!
	local i=0
	until grep -q "spinnic: ready" "$dir/spinnic.log" 2>/dev/null; do
		if ! kill -0 "$spid" 2>/dev/null || [ $i -ge 600 ]; then
			return 1
		fi
		sleep 0.1
		i=$((i + 1))
	done
}
tries=0
until start_spinnic; do
	kill -TERM "$spid" 2>/dev/null || true
	wait "$spid" 2>/dev/null || true
	spid=
	tries=$((tries + 1))
	if grep -qE "EAL: Cannot|Cannot init EAL|No free hugepages|Cannot allocate|Cannot create mbuf pool" \
		"$dir/spinnic.log"; then
		if [ $tries -lt 3 ]; then
			sleep 3
			continue
		fi
		echo "SKIP: spinnic cannot start (resources)"
		cat "$dir/spinnic.log"
		exit 77
	fi
	echo "spinnic did not start:" >&2
	cat "$dir/spinnic.log" >&2
	exit 1
done

# Open MPI 4.1.4's own bugs met on the way, avoided here and documented in
# doc/NOTES.md "Open MPI over spinnic": btl/portals4 drops every fragment
# above its eager limit (max_send_size 32768 avoids it) and calls the
# closed pml back from MPI_Finalize (the programs progress 100 ms before
# finalizing); coll/portals4 hangs in a non-contiguous bcast and leaves
# the error code of its non-blocking requests uninitialized.
mca=(--mca pml cm --mca mtl portals4 --mca osc portals4
     --mca coll basic,libnbc,self)
args=()
envs=()
case $config in
mtl|osc) ;;
btl) mca=(--mca pml ob1 --mca btl portals4,self --mca osc pt2pt
          --mca btl_portals4_max_send_size 32768
          --mca coll basic,libnbc,self)
     envs=(-x MPI_TEST_DRAIN_MS=100) ;;
coll) mca=(--mca pml cm --mca mtl portals4 --mca osc portals4
           --mca coll portals4,basic,libnbc,self --mca coll_base_verbose 10)
      args=(--no-typed-bcast --nb-status-unreliable) ;;
*) echo "unknown config $config" >&2; exit 1 ;;
esac

# the environment of the run (Open MPI reads OMPI_MCA_*; root runs as in CI)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LD_LIBRARY_PATH=$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "mpirun -np $np ${envs[*]:-} ${mca[*]} $prog ${args[*]:-} (spinnic --virtual $nodes)"
rc=0
timeout 600 "$prefix/bin/mpirun" -np "$np" --oversubscribe --bind-to none \
	-x SPINNIC_SOCKET="$dir/s/node%n.sock" -x LD_LIBRARY_PATH ${envs[@]+"${envs[@]}"} \
	"${mca[@]}" "$dir/$prog" ${args[@]+"${args[@]}"} >"$dir/mpirun.log" 2>&1 || rc=$?
grep -v "coll:base:comm_select\|coll_portals4_component\|coll:.*:component" \
	"$dir/mpirun.log" || true

kill -TERM "$spid"
i=0
while kill -0 "$spid" 2>/dev/null && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
src_rc=0
wait "$spid" || src_rc=$?
spid=
fail=0
if [ "$rc" != 0 ]; then
	echo "FAIL: mpirun exited $rc"
	fail=1
fi
if ! grep -q "$prog: $np ranks, [0-9]* checks passed" "$dir/mpirun.log"; then
	echo "FAIL: no pass line from $prog"
	fail=1
fi
if [ "$config" = coll ]; then
	# coll/portals4 must have been chosen, not only offered
	if ! grep -q "new communicator: MPI_COMM_WORLD" "$dir/mpirun.log" ||
	   grep -q "portals4.*[Dd]isqualifying" "$dir/mpirun.log" ||
	   ! grep -q "component available: portals4" "$dir/mpirun.log"; then
		echo "FAIL: coll/portals4 was not selected:"
		grep "coll" "$dir/mpirun.log" | head -20
		fail=1
	fi
fi
if [ "$src_rc" != 0 ]; then
	echo "FAIL: spinnic exited $src_rc"
	fail=1
fi
# final counters: nothing left on any node; triggered operations ran for coll
leaks=$(awk '
	/^node [0-9]+/ { node = $2 }
	$1 == "live:" {
		for (i = 2; i < NF; i += 2)
			if ($(i + 1) != "0")
				print "node " node ": " $i " " $(i + 1)
		seen++
	}
	$1 == "ctrl:" && $2 == "clients" { att[node] = $5 }
	{ for (i = 1; i < NF; i++) if ($i == "trig_fired") fired[node] = $(i + 1) }
	$1 == "tx:" && $2 == "pkts" { tx[node] = $3 }
	END {
		if (seen != '"$nodes"')
			print "final counters of " seen " nodes, want '"$nodes"'"
		# the ranks really went through spinnic: rank r on node r % nodes
		for (n = 0; n < '"$nodes"' && n < '"$np"'; n++)
			if (att[n] + 0 == 0 || tx[n] + 0 == 0)
				print "node " n ": attaches " att[n] " tx pkts " tx[n] ", want > 0"
		# coll/portals4 ran on the NICs: triggered operations fired
		# on every node (~2900 a node at 2 ranks; the host path: 0)
		if ("'"$config"'" == "coll")
			for (n = 0; n < '"$nodes"' && n < '"$np"'; n++)
				if (fired[n] + 0 < 100)
					print "node " n ": trig_fired " fired[n] + 0 ", want >= 100 (coll/portals4 on the NIC)"
	}
	' "$dir/spinnic.log")
if [ -n "$leaks" ]; then
	echo "FAIL: left at exit:"
	echo "$leaks"
	fail=1
fi
if [ "$fail" != 0 ]; then
	echo "---- mpirun output"
	cat "$dir/mpirun.log"
	echo "---- spinnic output"
	cat "$dir/spinnic.log"
	exit 1
fi
echo "PASS: $prog on $np ranks ($config), spinnic --virtual $nodes clean"
