#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bpf/spinnic_xdp.o on a veth pair in fresh network namespaces:
#  - it loads and attaches (generic/skb mode), under the names the af_xdp
#    PMD expects (one program; a map "xsks_map" of type xskmap);
#  - kernel traffic is unaffected (ping across the veth);
#  - it classifies: with no XSK bound, a UDP datagram to the spinnic port is
#    counted as "spinnic, no XSK on this queue" (and passed), any other
#    datagram as "not spinnic"; the port can be changed at run time in
#    spinnic_cfg;
#  - a program left attached blocks a second attach (as it blocks the PMD,
#    which attaches with XDP_FLAGS_UPDATE_IF_NOEXIST) and
#    tools/xdp-reset.sh removes it; attach in driver mode works after that.
#  - with XSK_PROBE (test/wire/xsk_probe.c): an AF_XDP socket bound to the
#    queue and stored in xsks_map as the af_xdp PMD does receives the
#    datagrams to the spinnic port, and the kernel socket on that port
#    receives none, while other ports still reach the kernel.
#   test_xdp.sh XDP_OBJ XDP_RESET_SH [XSK_PROBE]
# Exit 77 (skip) without root, netns, XDP, bpftool/jq or the object.
set -u
obj=${1:-}
reset=${2:-}
probe=${3:-}

skip() { echo "SKIP: $*"; exit 77; }
[ -n "$obj" ] && [ -f "$obj" ] || skip "no XDP object (clang or libbpf-dev missing at build)"
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, XDP)"
for c in ip bpftool jq ping; do
	command -v $c >/dev/null 2>&1 || skip "$c not installed"
done

a=spinnic-xdp-a-$$
b=spinnic-xdp-b-$$
cleanup() {
	ip netns del "$a" 2>/dev/null
	ip netns del "$b" 2>/dev/null
}
trap cleanup EXIT
ip netns add "$a" 2>/dev/null || skip "cannot create a network namespace"
ip netns add "$b" || skip "cannot create a network namespace"
# one queue each way: every packet arrives on rx queue 0
ip -n "$a" link add va numtxqueues 1 numrxqueues 1 type veth \
	peer name vb netns "$b" numtxqueues 1 numrxqueues 1 || skip "no veth"
ip -n "$a" addr add 10.177.0.1/24 dev va
ip -n "$b" addr add 10.177.0.2/24 dev vb
ip -n "$a" link set va up
ip -n "$b" link set vb up
ip -n "$a" link set lo up
ip -n "$b" link set lo up

fail=0
bad() { echo "FAIL: $*"; fail=1; }
ok() { echo "ok: $*"; }

if ! out=$(ip -n "$b" link set dev vb xdpgeneric obj "$obj" sec xdp 2>&1); then
	echo "$out"
	skip "cannot attach an XDP program here"
fi

# program and map names
prog_id=$(ip -n "$b" -d link show dev vb |
	sed -n 's/.*prog\/xdp id \([0-9]*\) name \([^ ]*\).*/\1 \2/p')
set -- $prog_id
if [ "${2:-}" = spinnic_xdp ]; then
	ok "attached in generic mode: prog id $1 name spinnic_xdp"
else
	bad "no spinnic_xdp program on vb: '$prog_id'"
	exit 1
fi
pid=$1
declare -A map_id
for m in $(bpftool prog show id "$pid" -j | jq -r '.map_ids[]'); do
	info=$(bpftool map show id "$m" -j)
	map_id[$(jq -r .name <<<"$info")]=$m
	[ "$(jq -r .name <<<"$info")" = xsks_map ] && xtype=$(jq -r .type <<<"$info")
done
if [ -n "${map_id[xsks_map]:-}" ] && [ "${xtype:-}" = xskmap ]; then
	ok "map xsks_map (xskmap) id ${map_id[xsks_map]}"
else
	bad "no xskmap named xsks_map; maps: ${!map_id[*]}"
fi
for m in spinnic_cfg spinnic_stats; do
	[ -n "${map_id[$m]:-}" ] || bad "no map $m"
done
[ $fail = 0 ] || exit 1

# sum over CPUs of one spinnic_stats counter
counter() {
	bpftool map dump id "${map_id[spinnic_stats]}" -j |
		jq "[.[] | select(.formatted.key == $1) | .formatted.values[].value] | add"
}
# 0 redirect, 1 spinnic but no XSK, 2 not spinnic
udp_to() { # PORT
	ip netns exec "$a" bash -c "echo spinnic > /dev/udp/10.177.0.2/$1"
}

if ip netns exec "$a" ping -c 3 -i 0.2 -W 2 10.177.0.2 >/dev/null; then
	ok "ping across the veth with the program attached"
else
	bad "ping fails with the program attached"
fi

r0=$(counter 0); n0=$(counter 1); p0=$(counter 2)
udp_to 5777; udp_to 5777; udp_to 5778; udp_to 53
sleep 0.2
r1=$(counter 0); n1=$(counter 1); p1=$(counter 2)
if [ $((n1 - n0)) = 2 ] && [ $((r1 - r0)) = 0 ] && [ $((p1 - p0)) -ge 2 ]; then
	ok "2 datagrams to 5777 classified spinnic (no XSK bound: passed), others not"
else
	bad "counters: redirect +$((r1 - r0)) no_xsk +$((n1 - n0)) pass +$((p1 - p0)) (want +0 +2 >=+2)"
fi

# redirection into an AF_XDP socket, bound the way the PMD binds it
if [ -n "$probe" ]; then
	pout=$(mktemp)
	ip netns exec "$b" "$probe" vb 0 "${map_id[xsks_map]}" 5777 2 \
		> "$pout" 2>&1 &
	ppid=$!
	for _ in $(seq 50); do
		grep -q ready "$pout" && break
		kill -0 $ppid 2>/dev/null || break
		sleep 0.1
	done
	if grep -q ready "$pout"; then
		r0=$(counter 0)
		udp_to 5777; udp_to 5777; udp_to 5777; udp_to 5778; udp_to 5778
		ip netns exec "$a" ping -c 1 -W 2 10.177.0.2 >/dev/null ||
			bad "ping fails with an XSK bound"
		wait $ppid
		res=$(tail -1 "$pout")
		r1=$(counter 0)
		if [ "$res" = "xsk_spin=3 xsk_other=0 kernel_spin=0 kernel_other=2" ] &&
		   [ $((r1 - r0)) = 3 ]; then
			ok "XSK on queue 0 got the 3 spinnic datagrams, the kernel none; 5778 reached the kernel"
		else
			bad "with an XSK bound: $res, redirect counter +$((r1 - r0)) (want xsk_spin=3 kernel_spin=0 kernel_other=2, +3)"
		fi
	else
		wait $ppid
		prc=$?
		if [ $prc = 77 ]; then
			echo "note: AF_XDP sockets unavailable, redirection not checked: $(cat "$pout")"
		else
			bad "xsk_probe failed: $(cat "$pout")"
		fi
	fi
	rm -f "$pout"
fi

# run-time port change through spinnic_cfg (key 0, host-order u32)
bpftool map update id "${map_id[spinnic_cfg]}" key 0 0 0 0 \
	value 0x70 0x17 0 0 || bad "spinnic_cfg update"
n0=$(counter 1); p0=$(counter 2)
udp_to 6000; udp_to 5777
sleep 0.2
n1=$(counter 1); p1=$(counter 2)
if [ $((n1 - n0)) = 1 ] && [ $((p1 - p0)) -ge 1 ]; then
	ok "spinnic_cfg port 6000: 6000 classified spinnic, 5777 not"
else
	bad "after port 6000: no_xsk +$((n1 - n0)) pass +$((p1 - p0)) (want +1 >=+1)"
fi

# a program left on the interface (spinnic killed) blocks the next attach
if ip -n "$b" link set dev vb xdpgeneric obj "$obj" sec xdp 2>/dev/null; then
	bad "second attach over a live program succeeded (expected EBUSY)"
else
	ok "stale program blocks a new attach"
fi
if out=$("$reset" vb "$b") && ! ip -n "$b" -d link show dev vb | grep -q prog/xdp; then
	ok "xdp-reset.sh: $out"
else
	bad "xdp-reset.sh left a program: $out"
fi
# driver (native) mode: veth has one; after the reset it attaches
if ip -n "$b" link set dev vb xdpdrv obj "$obj" sec xdp 2>/dev/null; then
	ip -n "$b" -d link show dev vb | grep -q 'prog/xdp.*name spinnic_xdp' &&
		ok "re-attached in driver mode" || bad "driver mode attach not shown"
	ip netns exec "$a" ping -c 2 -i 0.2 -W 2 10.177.0.2 >/dev/null &&
		ok "ping in driver mode" || bad "ping fails in driver mode"
else
	echo "note: driver mode not available on veth here"
fi
out=$("$reset" vb "$b") || bad "second reset: $out"
ip -n "$b" -d link show dev vb | grep -q prog/xdp && bad "program left after reset"
"$reset" vb "$b" >/dev/null || bad "reset of a clean interface must succeed"
ip netns exec "$a" ping -c 1 -W 2 10.177.0.2 >/dev/null || bad "ping after detach"
exit $fail
