#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A hostile neighbour on the LAN: two spinnic nodes, each in its own
# network namespace on a veth pair through DPDK's af_xdp PMD (as
# afxdp_two_nodes), the other ends of the pairs bridged in a third
# namespace, the LAN; spinnic-forge in the LAN sends crafted frames to
# either node (an AF_PACKET socket on that node's LAN-side end), and with
# a key captures real frames there to replay them.
# Each attack reproduces a finding of the issue "Hostile wire, hostile
# clients"; after each, real puts and gets between the nodes must work,
# and every lie must have been refused:
#   1. epoch    one sequenced probe claiming to be node 0 in a "newer"
#               epoch (now + 2^30 ms) does not cut node 0 off node 1
#   2. nids     probes and puts from 64 forged nids do not switch
#               reliable delivery off for a real peer arriving later
#   3. flood    12000 unsequenced 1 GiB headers matching a persistent ME
#               neither fill the message table nor grow memory
#   4. reply    forged REPLY and ACK frames for every guessable message id
#               do not complete a get or a put to a node that never answers
#               (they fail PTL_NI_UNDELIVERABLE after the peer timeout)
#   5. replay   frames captured on the LAN and sent again change nothing
#               (no message is delivered twice)
# Then all of it again with --wire-key: every forged frame is refused for
# its MAC (a node without the key is itest_wire_auth's test).
#   test_hostile.sh XDP_OBJ SPINNIC ITEST_CLIENT SPINNIC_FORGE
# Exit 77 (skip) without root, netns, veth, a bridge, XDP sockets, the
# af_xdp PMD or the object (clang).
set -u
obj=${1:-}
spinnic=${2:-}
client=${3:-}
forge=${4:-}

skip() { echo "SKIP: $*"; exit 77; }
[ -n "$obj" ] && [ -f "$obj" ] || skip "no XDP object (clang or libbpf-dev missing at build)"
[ -n "$spinnic" ] && [ -x "$spinnic" ] || skip "spinnic not built"
[ -n "$client" ] && [ -x "$client" ] || skip "itest_client not built"
[ -n "$forge" ] && [ -x "$forge" ] || skip "spinnic-forge not built"
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, raw sockets)"
command -v ip >/dev/null 2>&1 || skip "ip not installed"

port=5998
tag=$$
ns=(snh-a-$tag snh-b-$tag)
lan=snh-lan-$tag
ifc=(ha hb)     # the nodes' ends
lanifc=(la lb)  # their LAN-side ends, bridged
dir=$(mktemp -d "${TMPDIR:-/tmp}/spinnic-hostile-XXXXXX")
pids=()
fail=0
bad() { echo "FAIL: $*"; fail=1; }
ok() { echo "ok: $*"; }

stop_nodes() {
	local i st
	for i in "${!pids[@]}"; do
		kill -TERM "${pids[$i]}" 2>/dev/null
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}"
		st=$?
		[ $st = 0 ] || bad "spinnic $i exit status $st"
	done
	pids=()
}
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	ip netns del "${ns[0]}" 2>/dev/null
	ip netns del "${ns[1]}" 2>/dev/null
	ip netns del "$lan" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$dir"
	rm -rf "/var/run/dpdk/spinnic-hostile0-$tag" "/var/run/dpdk/spinnic-hostile1-$tag"
}
trap cleanup EXIT

ip netns add "${ns[0]}" 2>/dev/null || skip "cannot create a network namespace"
ip netns add "${ns[1]}" || skip "cannot create a network namespace"
ip netns add "$lan" || skip "cannot create a network namespace"
ip -n "$lan" link add br0 type bridge || skip "no bridge"
ip -n "$lan" link set br0 mtu 3000 up
for i in 0 1; do
	# one queue each way: every packet arrives on rx queue 0
	ip -n "$lan" link add "${lanifc[$i]}" numtxqueues 1 numrxqueues 1 \
		type veth peer name "${ifc[$i]}" netns "${ns[$i]}" \
		numtxqueues 1 numrxqueues 1 || skip "no veth"
	ip -n "$lan" link set "${lanifc[$i]}" mtu 3000 master br0 up
	ip -n "${ns[$i]}" link set "${ifc[$i]}" mtu 3000 up
	ip -n "${ns[$i]}" link set lo up
done

# spinnic on each end; $key_opt: --wire-key FILE or nothing
start_node() { # I [extra options]
	local i=$1 r
	shift
	ip netns exec "${ns[$i]}" "$spinnic" -l "$i" --no-pci --no-huge \
		--no-shconf -m 512 --file-prefix "spinnic-hostile$i-$tag" \
		--vdev "net_af_xdp$i,iface=${ifc[$i]},start_queue=0,queue_count=1,xdp_prog=$obj" \
		-- --socket "$dir/node$i.sock" --nid-base "$i" \
		--udp-port $port --peer-timeout-ms 1500 "$@" \
		> "$dir/spinnic$i.log" 2>&1 &
	pids[$i]=$!
	for _ in $(seq 300); do
		grep -q 'spinnic: ready' "$dir/spinnic$i.log" &&
			[ -S "$dir/node$i.sock" ] && return 0
		kill -0 "${pids[$i]}" 2>/dev/null || break
		sleep 0.1
	done
	cat "$dir/spinnic$i.log"
	if ! kill -0 "${pids[$i]}" 2>/dev/null &&
	   grep -Eq 'Failed to create xsk socket|xsk_socket__create|Address family not supported|No probed ethernet devices|no ports:' "$dir/spinnic$i.log"; then
		skip "af_xdp PMD or AF_XDP sockets unavailable"
	fi
	bad "spinnic on ${ifc[$i]} not ready"
	exit 1
}

# forge from the LAN, to node N (its LAN-side end)
forge_to() { # N ARGS...
	local n=$1
	shift
	ip netns exec "$lan" "$forge" "${lanifc[$n]}" $port "$@"
}

# target_start, pair: one checked exchange between the nodes
. "$(dirname "$0")/lib_pair.sh"

both_ways() { # WHAT
	pair "$1: put 100 kB node0->node1" 1 \
		"target op=put len=100000 buf=region match=0x77 seed=5" \
		"put len=100000 buf=region match=0x77 seed=5"
	pair "$1: put 100 kB node1->node0" 0 \
		"target op=put len=100000 buf=region match=0x78 seed=6" \
		"put len=100000 buf=region match=0x78 seed=6"
	pair "$1: get 64 kB node0<-node1" 1 \
		"target op=get len=65536 buf=region match=0x79 seed=7" \
		"get len=65536 buf=region match=0x79 seed=7"
}

counter() { # NODE NAME: the last value in the node's final counters
	grep -o "[ ]$2 [0-9]*" "$dir/spinnic$1.log" | tail -1 | awk '{print $2}'
}

rss_kb() { # PID
	awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null
}

# every attack on a fresh pair of nodes ($node_opts: their options), so
# that each shows its own effect; the nodes stop at the end of it, their
# final counters in $dir/spinnic*.log
fresh_nodes() {
	stop_nodes
	start_node 0 $node_opts
	start_node 1 $node_opts
}

# a client on node 1 holding a persistent ME (no events) until hold_stop;
# its "ready NID PID PT" line in $dir/hold.out
hold_start() { # ITEST_CLIENT ARGS
	exec 7> >(ip netns exec "${ns[1]}" env SPINNIC_SOCKET="$dir/node1.sock" \
		"$client" hold me=1 "$@" > "$dir/hold.out" 2>&1)
	hpid=$!
	for _ in $(seq 100); do
		grep -q '^ready ' "$dir/hold.out" && break
		sleep 0.1
	done
}
hold_stop() {
	exec 7>&-
	wait $hpid 2>/dev/null
}

# keyed: node N refused at least MIN frames for their MAC ("drop auth")
auth_dropped() { # N MIN PASS
	local v
	v=$(counter "$1" auth)
	[ "${v:-0}" -ge "$2" ] && ok "$3: node $1 refused $v frames without a valid MAC" ||
		bad "$3: node $1 refused '${v:-}' frames for their MAC (want >= $2)"
}

live_zero() { # PASS
	local i v
	for i in 0 1; do
		v=$(grep -o 'live: clients_live [0-9]*' "$dir/spinnic$i.log" | tail -1)
		[ "$v" = "live: clients_live 0" ] || bad "$1: node $i: '$v' at the end"
	done
}

# 2. forged node ids, while node 1 knows no real peer yet
attack_nids() { # PASS
	local v
	fresh_nodes
	forge_to 1 nids 1 100 64 >/dev/null || bad "$1: forge nids"
	sleep 0.3
	both_ways "$1: after 64 forged nids"
	stop_nodes
	if [ -n "$node_opts" ]; then
		auth_dropped 1 64 "$1"
	else
		v=$(counter 1 chal_sent)
		[ "${v:-0}" -ge 64 ] && ok "$1: node 1 challenged the forged nids ($v challenges)" ||
			bad "$1: node 1 sent ${v:-no} challenges"
	fi
	v=$(counter 1 rel_resets)
	[ "${v:-0}" = 1 ] && ok "$1: node 1 opened a session with node 0 only" ||
		bad "$1: node 1 opened ${v:-no} sessions"
	v=$(counter 1 nacks_sent)
	[ "${v:-0}" = 0 ] && ok "$1: node 1 answered none of the forged puts" ||
		bad "$1: node 1 sent $v NACKs to forged nids"
	live_zero "$1"
}

# 1. a forged "newer" epoch of a real peer, then its traffic
attack_epoch() { # PASS
	local v
	fresh_nodes
	both_ways "$1: before a forged epoch"
	forge_to 1 epoch 0 1 >/dev/null || bad "$1: forge epoch"
	forge_to 0 epoch 1 0 >/dev/null || bad "$1: forge epoch"
	sleep 0.3
	both_ways "$1: after a forged epoch"
	stop_nodes
	if [ -n "$node_opts" ]; then
		auth_dropped 1 1 "$1"
		auth_dropped 0 1 "$1"
	else
		v=$(counter 0 chal_ignored)
		[ "${v:-0}" -ge 1 ] && ok "$1: the challenge of the forged epoch went unanswered" ||
			bad "$1: chal_ignored '${v:-}' on node 0"
	fi
	live_zero "$1"
}

# 3. a header flood into a persistent wildcard ME on node 1
attack_flood() { # PASS
	local d0 d1 v
	fresh_nodes
	hold_start len=1048576 match=0xf100d
	set -- "$1" $(grep -m1 '^ready ' "$dir/hold.out")
	if [ $# -lt 5 ]; then
		bad "$1: hold client not ready: $(cat "$dir/hold.out")"
	else
		# what the heap and mappings may hold, resident or not
		d0=$(awk '/^VmData/ {print $2}' "/proc/${pids[1]}/status")
		forge_to 1 flood 77 "1:$4" 12000 1073741824 "$5" 0xf100d 20000 \
			>/dev/null || bad "$1: forge flood"
		sleep 0.5
		d1=$(awk '/^VmData/ {print $2}' "/proc/${pids[1]}/status")
		if [ -n "$d0" ] && [ -n "$d1" ] && [ $((d1 - d0)) -lt 65536 ]; then
			ok "$1: 12000 forged 1 GiB headers: node 1 data $d0 -> $d1 kB"
		else
			bad "$1: 12000 forged 1 GiB headers: node 1 data '$d0' -> '$d1' kB (64 MiB allowed)"
		fi
		both_ways "$1: during a header flood"
	fi
	hold_stop
	stop_nodes
	if [ -n "$node_opts" ]; then
		auth_dropped 1 1000 "$1"
	else
		v=$(counter 1 drop_table_share)
		[ "${v:-0}" -gt 0 ] &&
			ok "$1: node 1 refused $v forged headers over their share" ||
			bad "$1: node 1 refused '${v:-}' headers over their share"
	fi
	live_zero "$1"
}

# 4. forged replies and acks for a get and a put to a node that is not
# there (nid 5): both must fail UNDELIVERABLE, not complete OK
attack_reply() { # PASS
	local gpid ppid st v
	fresh_nodes
	ip netns exec "${ns[0]}" env SPINNIC_SOCKET="$dir/node0.sock" \
		"$client" get len=1024 buf=region match=0x5 seed=9 \
		target=5:0 pt=0 expect=undeliverable > "$dir/get5.out" 2>&1 &
	gpid=$!
	ip netns exec "${ns[0]}" env SPINNIC_SOCKET="$dir/node0.sock" \
		"$client" put len=1024 buf=region match=0x5 seed=9 \
		target=5:0 pt=0 expect=undeliverable > "$dir/put5.out" 2>&1 &
	ppid=$!
	sleep 0.5
	forge_to 0 reply 5 0 1024 16 4 >/dev/null || bad "$1: forge reply"
	wait $gpid
	st=$?
	if [ $st = 0 ] && grep -q '^ok' "$dir/get5.out"; then
		ok "$1: forged replies: the get failed UNDELIVERABLE"
	else
		bad "$1: forged replies: get (status $st): $(cat "$dir/get5.out")"
	fi
	wait $ppid
	st=$?
	if [ $st = 0 ] && grep -q '^ok' "$dir/put5.out"; then
		ok "$1: forged acks: the put failed UNDELIVERABLE"
	else
		bad "$1: forged acks: put (status $st): $(cat "$dir/put5.out")"
	fi
	both_ways "$1: after forged replies"
	stop_nodes
	if [ -n "$node_opts" ]; then
		auth_dropped 0 128 "$1"
	else
		v=$(counter 0 drop_unsequenced)
		[ "${v:-0}" -gt 0 ] && ok "$1: node 0 dropped $v unsequenced replies/acks" ||
			bad "$1: node 0 dropped no unsequenced reply"
	fi
	live_zero "$1"
}

# 5. frames captured on the LAN and sent again: nothing is delivered twice
attack_replay() { # PASS
	local c0 c1 v w
	fresh_nodes
	hold_start len=4096 match=0xabc
	set -- "$1" $(grep -m1 '^ready ' "$dir/hold.out")
	# a sniffer at each node's end of the LAN, sending back what it saw
	ip netns exec "$lan" "$forge" "${lanifc[0]}" $port replay 200 3 \
		> "$dir/replay0.out" 2>&1 &
	c0=$!
	ip netns exec "$lan" "$forge" "${lanifc[1]}" $port replay 200 3 \
		> "$dir/replay1.out" 2>&1 &
	c1=$!
	sleep 0.2
	if [ $# -ge 5 ]; then
		v=$(timeout 40 ip netns exec "${ns[0]}" \
			env SPINNIC_SOCKET="$dir/node0.sock" "$client" put \
			len=4096 buf=region match=0xabc count=3 seed=2 \
			target="$3:$4" pt="$5" 2>&1)
		grep -q '^ok' <<<"$v" && ok "$1: 3 puts into a persistent ME" ||
			bad "$1: puts into the persistent ME: $v"
	else
		bad "$1: hold client not ready: $(cat "$dir/hold.out")"
	fi
	both_ways "$1: while sniffed"
	wait $c0 $c1
	ok "$1: $(cat "$dir/replay0.out"), $(cat "$dir/replay1.out")"
	sleep 0.5
	both_ways "$1: after the replay"
	hold_stop
	stop_nodes
	# node 1 took 3 puts into the ME and one per both_ways, node 0 one per
	# both_ways: a replayed put would be a sixth (second) message
	v=$(counter 1 msgs_np)
	w=$(counter 0 msgs_np)
	[ "${v:-}" = 5 ] && [ "${w:-}" = 2 ] &&
		ok "$1: every message delivered once (node 1: $v, node 0: $w)" ||
		bad "$1: messages delivered: node 1 '${v:-}' (want 5), node 0 '${w:-}' (want 2)"
	v=$(( $(counter 0 drop_rel_dup) + $(counter 1 drop_rel_dup) ))
	[ "$v" -gt 0 ] && ok "$1: $v replayed frames recognised as duplicates" ||
		bad "$1: no replayed frame recognised as a duplicate"
	live_zero "$1"
}

node_opts=
start_node 0
start_node 1
ok "two spinnics ready on the LAN (af_xdp)"
both_ways "clean start"
[ -z "${ONLY:-}" ] || [ "$ONLY" = nids ] && attack_nids "no key"
[ -z "${ONLY:-}" ] || [ "$ONLY" = epoch ] && attack_epoch "no key"
[ -z "${ONLY:-}" ] || [ "$ONLY" = flood ] && attack_flood "no key"
[ -z "${ONLY:-}" ] || [ "$ONLY" = reply ] && attack_reply "no key"
[ -z "${ONLY:-}" ] || [ "$ONLY" = replay ] && attack_replay "no key"

# the same with a key: every forged frame fails its MAC first
head -c 32 /dev/urandom > "$dir/key"
chmod 600 "$dir/key"
node_opts="--wire-key $dir/key"
[ -z "${ONLY:-}" ] || [ "$ONLY" = nids ] && attack_nids "key"
[ -z "${ONLY:-}" ] || [ "$ONLY" = epoch ] && attack_epoch "key"
[ -z "${ONLY:-}" ] || [ "$ONLY" = flood ] && attack_flood "key"
[ -z "${ONLY:-}" ] || [ "$ONLY" = reply ] && attack_reply "key"
[ -z "${ONLY:-}" ] || [ "$ONLY" = replay ] && attack_replay "key"
stop_nodes

exit $fail
