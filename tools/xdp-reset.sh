#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Detach every XDP program from an interface: recovery from a program left
# behind by a spinnic (af_xdp PMD) that did not stop cleanly. The PMD
# attaches with XDP_FLAGS_UPDATE_IF_NOEXIST, so a stale program makes the
# next start fail with "Failed to set prog fd ... on interface".
#
#   tools/xdp-reset.sh IFACE [NETNS]
#
# Exit 0 when no XDP program is left on IFACE, 1 otherwise, 2 on usage.
set -u

if [ $# -lt 1 ] || [ $# -gt 2 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
	echo "usage: $0 IFACE [NETNS]" >&2
	exit 2
fi
ifc=$1
ns=${2:-}
ipc() {
	if [ -n "$ns" ]; then ip -n "$ns" "$@"; else ip "$@"; fi
}

if ! ipc link show dev "$ifc" >/dev/null 2>&1; then
	echo "$0: no interface $ifc${ns:+ in netns $ns}" >&2
	exit 1
fi
before=$(ipc -d link show dev "$ifc" | sed -n 's/.*prog\/xdp id \([0-9]*\) name \([^ ]*\).*/id \1 (\2)/p')
# One mode per call: generic (skb), driver (native), offload; whichever is
# not attached is a no-op. Errors are expected for modes the device lacks.
for mode in xdpgeneric xdpdrv xdpoffload xdp; do
	ipc link set dev "$ifc" "$mode" off 2>/dev/null || true
done
if ipc -d link show dev "$ifc" | grep -q 'prog/xdp'; then
	echo "$0: an XDP program is still attached to $ifc:" >&2
	ipc -d link show dev "$ifc" | grep 'prog/xdp' >&2
	exit 1
fi
if [ -n "$before" ]; then
	echo "$ifc: detached XDP program $before"
else
	echo "$ifc: no XDP program attached"
fi
exit 0
