#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The handler examples (examples/handlers/) as a user builds and runs them,
# out of spinnic's tree:
#   - each example folder copied alone into a scratch directory and built
#     there by its own Makefile, which finds the handler API and libspinnic
#     only through pkg-config: the build tree's uninstalled .pc files
#     (PKG_CONFIG_LIBDIR=<build>/meson-uninstalled, nothing else searched);
#   - spinnic --virtual 2 --handlers DIR (the three plugins in one folder),
#     then the clients of each example on the two nodes:
#       reduce_put: the int64 total of N int32s, summed by the handlers on
#         node 1 and put to a peer on node 0, equals the host's sum; no
#         byte of the message reached the reducer's buffer;
#       histogram: every byte of the target's buffer (kept packets in
#         place, dropped ones never written), the 256 bins and the packet
#         counts the completion handler wrote;
#       active_access (paper 004's use cases, the families aa_dht,
#         aa_count, aa_dirty): the hashtable insert by the aa_dht access
#         handler (owner on node 1: every key once in its table or chains,
#         nothing lost) and access counting by aa_count (every page's
#         write and read counters exact);
#   - again with --handlers FILE (the reduce_put plugin alone) and
#     --payload 1022: int32s straddle packets;
#   - spinnic stops cleanly with no context left.
# Fails when a plugin does not build or load, or any result is wrong.
#   test_handler_examples.sh SPINNIC EXAMPLES_DIR PKGCONFIG_DIR [SANITIZE]
# SANITIZE: meson's b_sanitize; a sanitized libspinnic needs clients built
# with the same -fsanitize (its runtime must come first), so the examples
# are built with it too.
# Exit 77 (skip) without pkg-config, cc or make, or when spinnic cannot
# start for lack of resources (hugepages).
set -u
spinnic=${1:-}
src=${2:-}
pcdir=${3:-}
sanitize=${4:-none}

skip() { echo "SKIP: $*"; exit 77; }
for c in pkg-config make "${CC:-cc}"; do
	command -v "$c" >/dev/null 2>&1 || skip "$c not installed"
done
[ -x "$spinnic" ] || { echo "FAIL: spinnic not built ($spinnic)"; exit 1; }
[ -d "$src" ] && [ -d "$pcdir" ] || { echo "FAIL: bad arguments"; exit 1; }

# spinnic loads no plugin that group or others could write
umask 022
dir=$(mktemp -d "${TMPDIR:-/tmp}/spinnic-hexamples-XXXXXX")
spid=
cpids=()
fail=0
bad() { echo "FAIL: $*"; fail=1; }

cleanup() {
	local p
	for p in "${cpids[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	if [ -n "$spid" ]; then
		kill -KILL "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
	fi
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---- build, as a user would: nothing of the tree but pkg-config --------
cflags="-O2 -g -Wall -Wextra -Werror"
[ "$sanitize" = none ] || [ -z "$sanitize" ] ||
	cflags="$cflags -fsanitize=$sanitize -fno-omit-frame-pointer"
export PKG_CONFIG_LIBDIR=$pcdir
unset PKG_CONFIG_PATH
for ex in reduce_put histogram active_access; do
	cp -r "$src/$ex" "$dir/$ex"
	make -C "$dir/$ex" clean > /dev/null 2>&1
	if ! make -C "$dir/$ex" CFLAGS="$cflags" \
			> "$dir/$ex.build" 2>&1; then
		cat "$dir/$ex.build"
		echo "FAIL: $ex: the out-of-tree build failed"
		exit 1
	fi
	echo "ok: $ex built out of tree"
done
mkdir "$dir/plugins"
cp "$dir/reduce_put/libreduce_put.so" "$dir/histogram/libhistogram.so" \
	"$dir/active_access/libactive_access.so" "$dir/plugins/"

# ---- spinnic --------------------------------------------------------------
spinnic_start() { # LOG ARGS...
	local log=$1 i
	shift
	"$spinnic" -- --virtual 2 --socket-dir "$dir/s" "$@" > "$log" 2>&1 &
	spid=$!
	for i in $(seq 300); do
		grep -q '^spinnic: ready' "$log" && return 0
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	wait "$spid" 2>/dev/null
	st=$?
	spid=
	cat "$log"
	if grep -qE 'EAL initialization failed|Cannot init EAL|EAL: Cannot|No free hugepages|Cannot create mbuf pool|Cannot get hugepage|lack of resources' "$log" ||
	   [ "$st" = 77 ]; then
		skip "spinnic cannot start (resources)"
	fi
	echo "FAIL: spinnic $* did not start (status $st)"
	exit 1
}

spinnic_stop() { # LOG
	local log=$1 i st
	kill -TERM "$spid"
	for i in $(seq 100); do
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$spid" 2>/dev/null && bad "spinnic did not stop on SIGTERM"
	wait "$spid"
	st=$?
	spid=
	[ "$st" = 0 ] || bad "spinnic exit status $st after SIGTERM"
	# final counters: the live line of each node
	[ "$(grep -c 'ctxs_live 0 ' "$log")" = 2 ] ||
		bad "sPIN contexts left at exit: $(grep 'live:' "$log")"
}

# run CLIENT ARGS on NODE in the background: $cpid, output in $dir/NAME.out
client_start() { # NAME NODE CLIENT ARGS...
	local name=$1 node=$2
	shift 2
	SPINNIC_SOCKET="$dir/s/node$node.sock" timeout 60 "$@" \
		> "$dir/$name.out" 2>&1 &
	cpid=$!
	cpids+=("$cpid")
}

# wait for "ready NID PID PT" from a client: $rdy
client_ready() { # NAME PID
	local i
	rdy=
	for i in $(seq 100); do
		rdy=$(grep -m1 '^ready ' "$dir/$1.out" | cut -d' ' -f2-)
		[ -n "$rdy" ] && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	bad "$1 not ready: $(cat "$dir/$1.out")"
	return 1
}

# wait for a client; it must exit 0 having printed a line starting "ok"
client_ok() { # NAME PID
	local st
	wait "$2"
	st=$?
	if [ "$st" != 0 ] || ! grep -q '^ok' "$dir/$1.out"; then
		bad "$1 (status $st): $(cat "$dir/$1.out")"
		return 1
	fi
	echo "ok: $1: $(grep -m1 '^ok' "$dir/$1.out" | cut -c4-)"
}

# reduce_put: peer on node 0, reducer on node 1, sender on node 0
reduce_put() { # WHAT N SEED
	local what=$1 n=$2 seed=$3 bin=$dir/reduce_put/reduce_put_client
	local ppid rpid spid_

	client_start "$what-peer" 0 "$bin" peer "$n" "$seed"
	ppid=$cpid
	client_ready "$what-peer" "$ppid" || return
	set -- $rdy
	client_start "$what-reducer" 1 "$bin" reduce "$1" "$2" "$3" "$n"
	rpid=$cpid
	client_ready "$what-reducer" "$rpid" || return
	set -- $rdy
	client_start "$what-sender" 0 "$bin" send "$1" "$2" "$3" "$n" "$seed"
	spid_=$cpid
	client_ok "$what-sender" "$spid_"
	client_ok "$what-peer" "$ppid"
	client_ok "$what-reducer" "$rpid"
}

# histogram: target on node 1, sender on node 0
histogram() { # WHAT LEN
	local what=$1 len=$2 bin=$dir/histogram/histogram_client tpid spid_

	client_start "$what-target" 1 "$bin" target "$len"
	tpid=$cpid
	client_ready "$what-target" "$tpid" || return
	set -- $rdy
	client_start "$what-sender" 0 "$bin" send "$1" "$2" "$3" "$len"
	spid_=$cpid
	client_ok "$what-sender" "$spid_"
	client_ok "$what-target" "$tpid"
}

# an Active Access use case: owner on node 1, initiator on node 0; both
# check what they see (aa_usecases.c)
aa_case() { # CASE
	local c=$1 bin=$dir/active_access/aa_usecases opid ipid

	client_start "aa-$c-owner" 1 "$bin" owner "$c"
	opid=$cpid
	client_ready "aa-$c-owner" "$opid" || return
	set -- $rdy
	client_start "aa-$c-init" 0 "$bin" init "$c" "$1" "$2" "$3"
	ipid=$cpid
	client_ok "aa-$c-init" "$ipid"
	client_ok "aa-$c-owner" "$opid"
}

spinnic_start "$dir/spinnic1.log" --handlers "$dir/plugins"
# last packet short; one packet; many packets
reduce_put reduce-100003 100003 7
reduce_put reduce-1 1 3
# a short last packet; one under 4 bytes (never filtered); one packet
histogram hist-100001 100001
histogram hist-6146 6146
histogram hist-100 100
# the DHT insert and access counting, by the plugin's access handlers
aa_case dht-handler
aa_case count
spinnic_stop "$dir/spinnic1.log"

spinnic_start "$dir/spinnic2.log" --payload 1022 \
	--handlers "$dir/reduce_put/libreduce_put.so"
reduce_put reduce-payload1022 100003 11
spinnic_stop "$dir/spinnic2.log"

if [ $fail != 0 ]; then
	echo "--- spinnic logs"
	cat "$dir"/spinnic*.log
	exit 1
fi
echo "handler_examples: all passed"
exit 0
