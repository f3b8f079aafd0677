#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The Active Access use cases (paper 004 §4; examples/handlers/active_access/:
# the client aa_usecases.c, the plugin libactive_access.so with the access
# handler families aa_dht, aa_count, aa_dirty) on two virtual nodes of one
# spinnic --handlers libactive_access.so: for each case the owner of the
# marked memory runs on node 1, the initiator on node 0; both check what they
# see and say "ok". Everything stops on its own (timeouts).
#
# usage: tools/aa-examples.sh [BUILD_DIR [CASE...]]
#        (env FAULTS="SPEC [SPEC]": --fault-inject SPEC for spinnic)
set -eu

BUILD=${1:-build}
[ $# -gt 0 ] && shift
CASES=${*:-dht-host dht-handler count ickpt getlog}
SPINNIC="$BUILD/app/spinnic/spinnic"
EX="$BUILD/examples/handlers/aa_usecases"
PLUGIN="$BUILD/examples/handlers/libactive_access.so"

for b in "$SPINNIC" "$EX"; do
	[ -x "$b" ] || { echo "aa-examples: $b is missing: build first" >&2; exit 1; }
done
[ -f "$PLUGIN" ] || { echo "aa-examples: $PLUGIN is missing: build first" >&2; exit 1; }

DIR=$(mktemp -d "${TMPDIR:-/tmp}/spinnic-aa-XXXXXX")
SPID=
OPID=
cleanup() {
	[ -n "$OPID" ] && kill "$OPID" 2>/dev/null || true
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

FARGS=
for f in ${FAULTS:-}; do
	FARGS="$FARGS --fault-inject $f"
done
# shellcheck disable=SC2086
timeout 300 "$SPINNIC" -- --virtual 2 --socket-dir "$DIR" \
	--handlers "$PLUGIN" $FARGS >"$DIR/spinnic.log" 2>&1 &
SPID=$!
i=0
until grep -q "spinnic: ready" "$DIR/spinnic.log" 2>/dev/null; do
	if ! kill -0 "$SPID" 2>/dev/null || [ $i -ge 300 ]; then
		echo "aa-examples: spinnic did not start:" >&2
		cat "$DIR/spinnic.log" >&2
		exit 1
	fi
	sleep 0.1; i=$((i + 1))
done

for c in $CASES; do
	rm -f "$DIR/owner.out"
	mkfifo "$DIR/owner.out"
	SPINNIC_SOCKET="$DIR/node1.sock" timeout 60 "$EX" owner "$c" >"$DIR/owner.out" &
	OPID=$!
	exec 3<"$DIR/owner.out"
	READY=
	while IFS= read -r line <&3; do
		case "$line" in
		ready\ *) READY=${line#ready }; break ;;
		*) echo "$line" ;;
		esac
	done
	[ -n "$READY" ] || { echo "aa-examples: $c: the owner did not start" >&2; tail -20 "$DIR/spinnic.log" >&2; exit 1; }
	# shellcheck disable=SC2086
	INIT=$(SPINNIC_SOCKET="$DIR/node0.sock" timeout 60 "$EX" init "$c" $READY) || {
		echo "aa-examples: $c: the initiator failed" >&2; tail -20 "$DIR/spinnic.log" >&2; exit 1; }
	OWN=$(cat <&3)
	exec 3<&-
	status=0
	wait "$OPID" || status=$?
	OPID=
	if [ $status -ne 0 ]; then
		echo "aa-examples: $c: the owner failed (status $status)" >&2
		tail -20 "$DIR/spinnic.log" >&2
		exit 1
	fi
	echo "aa-examples: $c: initiator $INIT; owner $OWN"
done
if [ -n "${FAULTS:-}" ]; then
	kill -TERM "$SPID" 2>/dev/null || true
	wait "$SPID" 2>/dev/null || true
	SPID=
	echo "aa-examples: faults injected and repaired: $(grep -Eo '(faults_rx|faults_tx) [0-9]+' "$DIR/spinnic.log" | tr '\n' ' ')retransmits $(grep -Eo 'retransmits [0-9]+' "$DIR/spinnic.log" | awk '{s += $2} END {print s}')"
fi
echo "aa-examples: ok"
