#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# make demo: two virtual nodes in one spinnic; a receiver exposes a buffer
# laid out as vector(COUNT,BLOCKLEN,STRIDE)[double] with the ddt_vector
# handler attached, a sender puts packed messages to it, the receiver
# verifies every byte and prints the throughput next to the streaming-copy
# limit measured in the same run. Everything stops on its own (timeouts).
#
# usage: tools/demo.sh [BUILD_DIR]   (env: COUNT BLOCKLEN STRIDE ITERS
#        FAULTS="SPEC [SPEC]": --fault-inject SPEC for spinnic, e.g.
#        FAULTS="rx:loss=2,reorder=8 tx:corrupt=1": reliable delivery
#        repairs it and the demo still verifies every byte)
set -eu

BUILD=${1:-build}
COUNT=${COUNT:-65536}
BLOCKLEN=${BLOCKLEN:-8}
STRIDE=${STRIDE:-16}
ITERS=${ITERS:-16}
SPINNIC="$BUILD/app/spinnic/spinnic"
RECV="$BUILD/examples/demo_recv"
SEND="$BUILD/examples/demo_send"

for b in "$SPINNIC" "$RECV" "$SEND"; do
	[ -x "$b" ] || { echo "demo: $b is missing: build first (make build)" >&2; exit 1; }
done

DIR=$(mktemp -d "${TMPDIR:-/tmp}/spinnic-demo-XXXXXX")
SPID=
RPID=
cleanup() {
	[ -n "$RPID" ] && kill "$RPID" 2>/dev/null || true
	if [ -n "$SPID" ] && kill -0 "$SPID" 2>/dev/null; then
		kill -TERM "$SPID" 2>/dev/null || true
		i=0
		while kill -0 "$SPID" 2>/dev/null && [ $i -lt 50 ]; do
			sleep 0.1; i=$((i + 1))
		done
		kill -KILL "$SPID" 2>/dev/null || true
	fi
	rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# the receiver's region must hold the typed buffer: extent + slack
EXTENT=$(( ((COUNT - 1) * STRIDE + BLOCKLEN) * 8 ))
REGION=$(( (EXTENT + 32 * 1024 * 1024 + 2097151) / 2097152 * 2097152 ))

FARGS=
for f in ${FAULTS:-}; do
	FARGS="$FARGS --fault-inject $f"
done
echo "demo: starting spinnic --virtual 2 (two NICs wired back to back)${FAULTS:+, faults injected: $FAULTS}"
# shellcheck disable=SC2086
timeout 120 "$SPINNIC" -- --virtual 2 --socket-dir "$DIR" $FARGS >"$DIR/spinnic.log" 2>&1 &
SPID=$!
i=0
until grep -q "spinnic: ready" "$DIR/spinnic.log" 2>/dev/null; do
	if ! kill -0 "$SPID" 2>/dev/null || [ $i -ge 200 ]; then
		echo "demo: spinnic did not start:" >&2
		cat "$DIR/spinnic.log" >&2
		exit 1
	fi
	sleep 0.1; i=$((i + 1))
done

mkfifo "$DIR/recv.out"
SPINNIC_SOCKET="$DIR/node1.sock" SPINNIC_REGION_SIZE=$REGION \
	timeout 60 "$RECV" "$COUNT" "$BLOCKLEN" "$STRIDE" "$ITERS" >"$DIR/recv.out" &
RPID=$!
exec 3<"$DIR/recv.out"
READY=
while IFS= read -r line <&3; do
	case "$line" in
	ready\ *) READY=${line#ready }; break ;;
	*) echo "$line" ;;
	esac
done
[ -n "$READY" ] || { echo "demo: the receiver did not start" >&2; exit 1; }
set -- $READY
PACKED=$(( COUNT * BLOCKLEN * 8 ))
echo "demo: receiver is node $1 pid $2 pt $3; node 0 sends vector($COUNT,$BLOCKLEN,$STRIDE)[double] packed ($PACKED bytes) $ITERS times"
SPINNIC_SOCKET="$DIR/node0.sock" SPINNIC_REGION_SIZE=$(( (PACKED + 16 * 1024 * 1024 + 2097151) / 2097152 * 2097152 )) \
	timeout 60 "$SEND" "$1" "$2" "$3" "$COUNT" "$BLOCKLEN" "$STRIDE" "$ITERS" || {
	echo "demo: sender failed" >&2; exit 1; }
cat <&3
exec 3<&-
status=0
wait "$RPID" || status=$?
RPID=
if [ $status -ne 0 ]; then
	echo "demo: receiver failed (status $status)" >&2
	tail -40 "$DIR/spinnic.log" >&2
	exit 1
fi
if [ -n "${FAULTS:-}" ]; then
	kill -TERM "$SPID" 2>/dev/null || true
	wait "$SPID" 2>/dev/null || true
	SPID=
	echo "demo: faults injected and repaired: $(grep -Eo '(faults_rx|faults_tx) [0-9]+' "$DIR/spinnic.log" | tr '\n' ' ')retransmits $(grep -Eo 'retransmits [0-9]+' "$DIR/spinnic.log" | awk '{s += $2} END {print s}')"
fi
echo "demo: ok"
