# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the wire tests that run spinnic nodes in network namespaces:
# one put or get between two nodes with itest_client, both ends checked.
# Uses the caller's ns[] (namespace per node), $dir (node<i>.sock, scratch
# files), $client (itest_client) and its ok/bad functions.

# start a target on node T (background, $tpid); $rdy: "NID PID PT"
target_start() { # T ARGS
	local t=$1
	ip netns exec "${ns[$t]}" env SPINNIC_SOCKET="$dir/node$t.sock" \
		"$client" $2 > "$dir/target.out" 2>&1 &
	tpid=$!
	for _ in $(seq 100); do
		grep -q '^ready ' "$dir/target.out" && break
		kill -0 $tpid 2>/dev/null || break
		sleep 0.1
	done
	rdy=$(grep -m1 '^ready ' "$dir/target.out" | cut -d' ' -f2-)
}

# one exchange: target on TNODE, initiator on the other node
pair() { # WHAT TNODE "TARGET ARGS" "INITIATOR ARGS"
	local what=$1 t=$2 n=$((1 - $2)) targs=$3 iargs=$4 line st
	target_start "$t" "$targs"
	if [ -z "$rdy" ]; then
		bad "$what: target not ready: $(cat "$dir/target.out")"
		kill $tpid 2>/dev/null
		wait $tpid 2>/dev/null
		return
	fi
	set -- $rdy
	line=$(timeout 40 ip netns exec "${ns[$n]}" \
		env SPINNIC_SOCKET="$dir/node$n.sock" \
		"$client" $iargs target="$1:$2" pt="$3" 2>&1)
	st=$?
	if [ $st != 0 ] || ! grep -q '^ok' <<<"$line"; then
		bad "$what: initiator (status $st): $line"
	fi
	for _ in $(seq 200); do
		kill -0 $tpid 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 $tpid 2>/dev/null; then
		kill $tpid
		wait $tpid
		bad "$what: target did not finish: $(cat "$dir/target.out")"
		return
	fi
	wait $tpid
	st=$?
	if [ $st != 0 ] || ! grep -q '^ok' "$dir/target.out"; then
		bad "$what: target (status $st): $(cat "$dir/target.out")"
		return
	fi
	ok "$what"
}

