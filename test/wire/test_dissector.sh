#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/spinnic.lua decodes every spinnic packet kind: spinnic-mkpcap writes
# a pcap with one frame of each kind/flag combination (and authenticated
# ones, --wire-key: trailer after the payload) and prints the header
# fields it put in each; tshark with the dissector must decode the same
# values, field by field, on the default port and on a port set with the
# dissector's preference.
#   test_dissector.sh MKPCAP LUA_SCRIPT
# Exit 77 (skip) without tshark.
set -u
mkpcap=$1
lua=$2
if ! command -v tshark >/dev/null 2>&1; then
	echo "SKIP: tshark not installed (apt-get install tshark)"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

fields="version type flags op ack_req ni fail_type atomic_op atomic_type
src_nid src_pid dst_nid dst_pid pt_index uid pay_len match_bits hdr_data
msg_id msg_len offset remote_offset mlength epoch seq ack_epoch ack_seq sack_base sack
auth_ctr"
eargs=()
for x in $fields; do eargs+=(-e "spinnic.$x"); done

check() { # PORT [tshark options...]
	local port=$1
	shift
	local pcap="$tmp/spin_$port.pcap"
	if ! "$mkpcap" "$pcap" "$port" > "$tmp/expect_$port.raw"; then
		echo "FAIL: spinnic-mkpcap $port"
		fail=1
		return
	fi
	# the header line names the fields, in our order
	if [ "$(head -1 "$tmp/expect_$port.raw" | tr -d '#' | tr '\t' ' ')" != \
	     "$(echo $fields)" ]; then
		echo "FAIL: mkpcap field list differs from the test's"
		fail=1
	fi
	grep -v '^#' "$tmp/expect_$port.raw" > "$tmp/expect_$port"
	local n
	n=$(wc -l < "$tmp/expect_$port")
	# TShark warns on stderr when run as root; keep it for the log only
	if ! tshark -X "lua_script:$lua" "$@" -r "$pcap" -T fields \
	     "${eargs[@]}" > "$tmp/got_$port" 2> "$tmp/err_$port"; then
		echo "FAIL: tshark exited non-zero (port $port):"
		cat "$tmp/err_$port"
		fail=1
		return
	fi
	if grep -qi 'lua' "$tmp/err_$port"; then
		echo "FAIL: Lua errors (port $port):"
		cat "$tmp/err_$port"
		fail=1
	fi
	if ! diff -u "$tmp/expect_$port" "$tmp/got_$port"; then
		echo "FAIL: decoded fields differ from those written (port $port)"
		fail=1
	else
		echo "ok: $n frames, every header field decoded (port $port)"
	fi
	# the Info column names the kind of every frame
	tshark -X "lua_script:$lua" "$@" -r "$pcap" -T fields \
		-e _ws.col.Info > "$tmp/info_$port" 2>/dev/null
	local want
	for want in "^PUT H msg" "^PUT P msg" "^PUT C msg" "^PUT H|C msg" \
		    "^ATOMIC H|C" "^FETCH_ATOMIC H|C" "^SWAP H|C" "^GET msg" \
		    "^REPLY GET H msg" "^REPLY GET P msg" "^REPLY GET C msg" \
		    "^REPLY FETCH_ATOMIC H|C" "^ACK PUT msg .* NI_OK" \
		    "^NACK PUT msg .* NI_NO_MATCH" "^TACK ack" \
		    "^TACK probe seq" "^CHAL epoch" "^CHAL_ACK epoch" \
		    "^PUT H|C msg .* len 77 .*\[auth ctr [0-9]*\]$" \
		    "^TACK ack .*\[auth ctr [0-9]*\]$"; do
		if ! grep -q -- "$want" "$tmp/info_$port"; then
			echo "FAIL: no Info line matching '$want' (port $port)"
			fail=1
		fi
	done
}

check 5777
check 6000 -o spinnic.udp_port:6000
# without the preference, port 6000 is not spinnic
if tshark -X "lua_script:$lua" -r "$tmp/spin_6000.pcap" -T fields \
	-e spinnic.type 2>/dev/null | grep -q .; then
	echo "FAIL: port 6000 decoded as spinnic without the preference"
	fail=1
fi
exit $fail
