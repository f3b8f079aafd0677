#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Two spinnic nodes on the two ends of a veth pair, each in its own network
# namespace, each on its end through DPDK's af_xdp PMD with the spinnic XDP
# program (doc/REAL-NIC.md §1):
#   - node 1's end carries a stale XDP program first: spinnic --xdp-reset
#     removes it before the PMD probes (without it the probe fails);
#   - both run --udp-port 5999, not the program's built-in 5777: spinnic
#     writes it into the program's spinnic_cfg map, or nothing arrives;
#   - itest_client processes in the matching namespaces (SPINNIC_SOCKET)
#     exchange puts (1 B and 1 MiB, region and malloc'd buffers, both
#     directions) and gets (1 B, 1 MiB), every byte checked by the clients;
#   - the kernel keeps the interface: ping between the veth ends runs the
#     whole time and loses nothing;
#   - the programs' counters: spinnic packets redirected, none on a queue
#     without a socket; after a clean stop no XDP program is left;
#   - a peer that disappears: node 1 SIGKILLed, node 0's puts and gets to
#     it fail with PTL_NI_UNDELIVERABLE (--peer-timeout-ms), then node 1
#     comes back in a new epoch and puts work again.
#   test_afxdp.sh XDP_OBJ SPINNIC ITEST_CLIENT
# Exit 77 (skip) without root, netns, veth, XDP sockets, the af_xdp PMD or
# the object (clang). spinnic runs on ordinary pages (--no-huge): no
# hugepages needed.
set -u
obj=${1:-}
spinnic=${2:-}
client=${3:-}

skip() { echo "SKIP: $*"; exit 77; }
[ -n "$obj" ] && [ -f "$obj" ] || skip "no XDP object (clang or libbpf-dev missing at build)"
[ -n "$spinnic" ] && [ -x "$spinnic" ] || skip "spinnic not built"
[ -n "$client" ] && [ -x "$client" ] || skip "itest_client not built"
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, XDP)"
for c in ip bpftool jq ping; do
	command -v $c >/dev/null 2>&1 || skip "$c not installed"
done

port=5999
tag=$$
ns=(snx-a-$tag snx-b-$tag)
ifc=(va vb)
addr=(10.178.0.1 10.178.0.2)
dir=$(mktemp -d "${TMPDIR:-/tmp}/spinnic-afxdp-XXXXXX")
pids=()
ping_pid=
fail=0
bad() { echo "FAIL: $*"; fail=1; }
ok() { echo "ok: $*"; }

cleanup() {
	local p
	[ -n "$ping_pid" ] && kill "$ping_pid" 2>/dev/null
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	sleep 1
	for p in "${pids[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	ip netns del "${ns[0]}" 2>/dev/null
	ip netns del "${ns[1]}" 2>/dev/null
	rm -rf "$dir"
	# the EAL runtime dirs of our --file-prefix (telemetry sockets)
	rm -rf "/var/run/dpdk/spinnic-afxdp0-$tag" "/var/run/dpdk/spinnic-afxdp1-$tag"
}
trap cleanup EXIT

ip netns add "${ns[0]}" 2>/dev/null || skip "cannot create a network namespace"
ip netns add "${ns[1]}" || skip "cannot create a network namespace"
# one queue each way: every packet arrives on rx queue 0 = start_queue
ip -n "${ns[0]}" link add va numtxqueues 1 numrxqueues 1 type veth \
	peer name vb netns "${ns[1]}" numtxqueues 1 numrxqueues 1 || skip "no veth"
for i in 0 1; do
	ip -n "${ns[$i]}" addr add "${addr[$i]}/24" dev "${ifc[$i]}"
	# room for 2 KiB payloads + 154 B of headers; below veth's XDP limit
	# (about 3.5 KB): spinnic sets 2188 itself, this covers the start
	ip -n "${ns[$i]}" link set "${ifc[$i]}" mtu 3000 up
	ip -n "${ns[$i]}" link set lo up
done

# a program left behind by a killed spinnic
if ! ip -n "${ns[1]}" link set dev vb xdpgeneric obj "$obj" sec xdp 2>/dev/null; then
	skip "cannot attach an XDP program here"
fi

# spinnic on each end: EAL args of our own (no hugepages, no PCI)
start_node() { # I [extra options]
	local i=$1
	shift
	ip netns exec "${ns[$i]}" "$spinnic" -l "$i" --no-pci --no-huge \
		--no-shconf -m 512 --file-prefix "spinnic-afxdp$i-$tag" \
		--vdev "net_af_xdp0,iface=${ifc[$i]},start_queue=0,queue_count=1,xdp_prog=$obj" \
		-- --socket "$dir/node$i.sock" --nid-base "$i" \
		--udp-port $port "$@" > "$dir/spinnic$i.log" 2>&1 &
	pids[$i]=$!
}
start_node 0
start_node 1 --xdp-reset vb

# no AF_XDP in the kernel, or no af_xdp PMD to probe the vdev
unavailable='Failed to create xsk socket|xsk_socket__create|Address family not supported|No probed ethernet devices|no ports:'
for i in 0 1; do
	for _ in $(seq 300); do
		grep -q 'spinnic: ready' "$dir/spinnic$i.log" && break
		kill -0 "${pids[$i]}" 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -q 'spinnic: ready' "$dir/spinnic$i.log"; then
		cat "$dir/spinnic$i.log"
		if ! kill -0 "${pids[$i]}" 2>/dev/null &&
		   grep -Eq "$unavailable" "$dir/spinnic$i.log"; then
			skip "af_xdp PMD or AF_XDP sockets unavailable"
		fi
		bad "spinnic on ${ifc[$i]} not ready"
		exit 1
	fi
done
ok "two spinnics ready on the veth ends (af_xdp)"

if grep -q 'xdp-reset vb: detached XDP program id [0-9]* (spinnic_xdp, generic mode)' "$dir/spinnic1.log"; then
	ok "--xdp-reset removed the stale program before the PMD probed"
else
	bad "no --xdp-reset line: $(grep xdp-reset "$dir/spinnic1.log")"
fi
for i in 0 1; do
	grep -q "net_af_xdp on ${ifc[$i]}): XDP program spinnic_xdp id [0-9]* steers UDP port $port" \
		"$dir/spinnic$i.log" || bad "node $i did not set UDP port $port in the program"
done

# the kernel's traffic during the whole run
ip netns exec "${ns[0]}" ping -i 0.2 -W 2 "${addr[1]}" > "$dir/ping.log" 2>&1 &
ping_pid=$!

# pair: one checked exchange between the nodes (target on TNODE)
. "$(dirname "$0")/lib_pair.sh"

m=match=0x77
pair "put 1 B region->region node0->node1" 1 \
	"target op=put len=1 buf=region $m seed=3" "put len=1 buf=region $m seed=3"
pair "put 1 B malloc->malloc node0->node1" 1 \
	"target op=put len=1 buf=malloc $m seed=4" "put len=1 buf=malloc $m seed=4"
pair "put 1 MiB region->region node0->node1" 1 \
	"target op=put len=1048576 buf=region $m seed=5" "put len=1048576 buf=region $m seed=5"
pair "put 1 MiB malloc->malloc node0->node1" 1 \
	"target op=put len=1048576 buf=malloc $m seed=6" "put len=1048576 buf=malloc $m seed=6"
pair "put 1 MiB region->malloc node1->node0" 0 \
	"target op=put len=1048576 buf=malloc count=2 $m seed=7" "put len=1048576 buf=region count=2 $m seed=7"
pair "get 1 B node0<-node1" 1 \
	"target op=get len=1 buf=region match=0x1234 seed=8" "get len=1 buf=region match=0x1234 seed=8"
pair "get 1 MiB node0<-node1 (malloc'd at both ends)" 1 \
	"target op=get len=1048576 buf=malloc match=0x1234 seed=9" "get len=1048576 buf=malloc match=0x1234 seed=9"

# steering counters of both programs
for i in 0 1; do
	pid=$(ip -n "${ns[$i]}" -d link show dev "${ifc[$i]}" |
		sed -n 's/.*prog\/xdp id \([0-9]*\) name spinnic_xdp.*/\1/p')
	if [ -z "$pid" ]; then
		bad "no spinnic_xdp on ${ifc[$i]} while spinnic runs"
		continue
	fi
	declare -A mid=()
	for m in $(bpftool prog show id "$pid" -j | jq -r '.map_ids[]'); do
		mid[$(bpftool map show id "$m" -j | jq -r .name)]=$m
	done
	cnt() {
		bpftool map dump id "${mid[spinnic_stats]}" -j |
			jq "[.[] | select(.formatted.key == $1) | .formatted.values[].value] | add"
	}
	cfgp=$(bpftool map dump id "${mid[spinnic_cfg]}" -j | jq '.[0].formatted.value')
	red=$(cnt 0)
	nox=$(cnt 1)
	if [ "$cfgp" = $port ] && [ "$red" -gt 500 ] && [ "$nox" = 0 ]; then
		ok "${ifc[$i]}: spinnic_cfg $cfgp, $red packets redirected to spinnic, 0 on a queue without it"
	else
		bad "${ifc[$i]}: spinnic_cfg '$cfgp' redirect '$red' no_xsk '$nox' (want $port, >500, 0)"
	fi
done

# at least a second of pings, whatever the exchanges took
for _ in $(seq 50); do
	[ "$(grep -c 'bytes from' "$dir/ping.log")" -ge 5 ] && break
	sleep 0.1
done
kill -INT "$ping_pid"
wait "$ping_pid"
ping_pid=
stat=$(grep 'packets transmitted' "$dir/ping.log")
tx=$(sed -n 's/^\([0-9]*\) packets transmitted.*/\1/p' <<<"$stat")
rx=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' <<<"$stat")
# the echo of the last request may still be on its way at SIGINT
if [ -n "$tx" ] && [ "$tx" -ge 5 ] && [ $((tx - rx)) -le 1 ]; then
	ok "ping kept working during the run: $stat"
else
	bad "ping during the run: $stat"
fi

for i in 0 1; do
	kill -TERM "${pids[$i]}"
done
for i in 0 1; do
	wait "${pids[$i]}"
	st=$?
	[ $st = 0 ] || bad "spinnic $i exit status $st"
	d=$(sed -n 's/^  rx: pkts \([0-9]*\) bytes [0-9]* drops \([0-9]*\).*/\1 \2/p' "$dir/spinnic$i.log" | tail -1)
	# a resend that was not needed (an ack late on a shared machine)
	# arrives as a duplicate: dropped by sequence number, not a loss
	rd=$(grep -o 'drop_rel_dup [0-9]*' "$dir/spinnic$i.log" | tail -1 | cut -d' ' -f2)
	# nor is what a sender sent before the receiver verified its epoch
	# (a new session, or node 1's restart): resent after the challenge
	re=$(grep -o 'drop_rel_epoch [0-9]*' "$dir/spinnic$i.log" | tail -1 | cut -d' ' -f2)
	set -- $d
	if [ "${1:-0}" -gt 0 ] && [ -n "${2:-}" ] &&
	   [ $(( $2 - ${rd:-0} - ${re:-0} )) = 0 ]; then
		ok "node $i received $1 packets, lost none (${rd:-0} duplicates of resends, ${re:-0} before a session opened, dropped)"
	else
		bad "node $i counters: rx '$d', drop_rel_dup '${rd:-0}', drop_rel_epoch '${re:-0}'"
		# the second phase reuses the log files: show these counters now
		echo "---- spinnic $i (first phase) ----"
		cat "$dir/spinnic$i.log"
	fi
	ip -n "${ns[$i]}" -d link show dev "${ifc[$i]}" | grep -q prog/xdp &&
		bad "XDP program left on ${ifc[$i]} after a clean stop"
done
pids=()

# A peer that disappears (DESIGN §11): node 1 is SIGKILLed; node 0's puts
# and gets to it fail with PTL_NI_UNDELIVERABLE after --peer-timeout-ms
# instead of hanging. Node 1 then comes back (a new process, a new epoch,
# its stale XDP program reset) and a put goes through again.
wait_ready() { # I
	local i=$1
	for _ in $(seq 300); do
		grep -q 'spinnic: ready' "$dir/spinnic$i.log" && return 0
		kill -0 "${pids[$i]}" 2>/dev/null || break
		sleep 0.1
	done
	bad "spinnic $i not ready (peer test)"
	return 1
}
start_node 0 --peer-timeout-ms 800
start_node 1 --xdp-reset vb
if wait_ready 0 && wait_ready 1; then
	pair "put 1 MiB before node 1 disappears" 1 \
		"target op=put len=1048576 match=0x77 seed=11" \
		"put len=1048576 match=0x77 seed=11"
	kill -KILL "${pids[1]}"
	wait "${pids[1]}" 2>/dev/null
	for what in "put len=300000 count=4 window=4" "get len=5000" \
		    "put len=8"; do
		line=$(timeout 40 ip netns exec "${ns[0]}" \
			env SPINNIC_SOCKET="$dir/node0.sock" \
			"$client" $what target=1:0 pt=0 expect=undeliverable 2>&1)
		if [ $? = 0 ] && grep -q '^ok' <<<"$line"; then
			ok "node 1 gone: $what: $line"
		else
			bad "node 1 gone: $what: $line"
		fi
	done
	start_node 1 --xdp-reset vb
	if wait_ready 1; then
		pair "put 1 MiB to node 1 back again" 1 \
			"target op=put len=1048576 match=0x77 seed=12" \
			"put len=1048576 match=0x77 seed=12"
	fi
	kill -TERM "${pids[0]}" "${pids[1]}"
	wait "${pids[0]}" "${pids[1]}"
	grep -q 'peer_fails [1-9]' "$dir/spinnic0.log" ||
		bad "node 0 counted no peer failure"
fi
pids=()
if [ $fail != 0 ]; then
	for i in 0 1; do
		echo "---- spinnic $i ----"
		cat "$dir/spinnic$i.log"
	done
fi
exit $fail
