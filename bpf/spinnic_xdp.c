/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic XDP steering program (DESIGN §5): IPv4/UDP packets to spinnic's
 * UDP port go to the AF_XDP socket of the rx queue they arrived on;
 * everything else (ARP, ICMP, other UDP, TCP, IPv6, VLAN-tagged frames,
 * IP fragments) goes on to the kernel stack.
 *
 * Layout expected by DPDK 22.11's af_xdp PMD when it loads this object
 * itself (devarg xdp_prog=): the first program of the object is attached
 * (so there is exactly one), the map named "xsks_map" is found by name and
 * the PMD stores the XSK of netdev queue start_queue+i at key
 * start_queue+i, which is the rx_queue_index the kernel gives us. The PMD
 * creates every other map of the object too, so the two small maps below
 * are tolerated.
 *
 * The port: spinnic_udp_port (a const global, default
 * SPINNIC_XDP_UDP_PORT = 5777, or -DSPINNIC_XDP_UDP_PORT=N at build) is
 * frozen when the PMD loads the object. A running spinnic (or bpftool)
 * overrides it without a rebuild by writing a non-zero port, host byte
 * order, at key 0 of spinnic_cfg. See doc/REAL-NIC.md.
 *
 * Built with: clang -O2 -g -target bpf -c spinnic_xdp.c
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#ifndef SPINNIC_XDP_UDP_PORT
#define SPINNIC_XDP_UDP_PORT 5777
#endif
/* Keys are netdev rx queue indices; more than any NIC spinnic targets. */
#define SPINNIC_XDP_MAX_QUEUES 256

/* Counters in spinnic_stats (per CPU; sum the CPUs). */
enum spinnic_xdp_stat {
	SPINNIC_XDP_REDIRECT = 0, /* spinnic packet sent to the queue's XSK */
	SPINNIC_XDP_NO_XSK = 1,   /* spinnic packet, no XSK on its queue:
				     passed to the kernel */
	SPINNIC_XDP_PASS = 2,     /* not spinnic: passed to the kernel */
	SPINNIC_XDP_STATS,
};

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, SPINNIC_XDP_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

/* key 0: UDP port, host byte order; 0 = spinnic_udp_port */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} spinnic_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SPINNIC_XDP_STATS);
	__type(key, __u32);
	__type(value, __u64);
} spinnic_stats SEC(".maps");

/* Set by a libbpf loader before load (skeleton / .rodata); else default. */
volatile const __u16 spinnic_udp_port = SPINNIC_XDP_UDP_PORT;

static __always_inline void
stat_inc(__u32 key)
{
	__u64 *v = bpf_map_lookup_elem(&spinnic_stats, &key);

	if (v)
		*v += 1;
}

static __always_inline __u16
udp_port(void)
{
	__u32 key = 0;
	__u32 *v = bpf_map_lookup_elem(&spinnic_cfg, &key);

	if (v && *v != 0 && *v <= 0xffff)
		return (__u16)*v;
	return spinnic_udp_port;
}

/* 1 when the frame is IPv4/UDP to the spinnic port, else 0. */
static __always_inline int
is_spinnic(void *data, void *data_end)
{
	struct ethhdr *eth = data;
	struct iphdr *ip;
	struct udphdr *udp;
	__u32 ihl;

	if ((void *)(eth + 1) > data_end)
		return 0;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return 0;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > data_end)
		return 0;
	if (ip->version != 4 || ip->protocol != IPPROTO_UDP)
		return 0;
	/* fragments carry no (or a partial) datagram: the kernel reassembles;
	 * spinnic never sends them (DF) */
	if (ip->frag_off & bpf_htons(0x3fff))
		return 0;
	ihl = ip->ihl * 4u;
	if (ihl < sizeof(*ip))
		return 0;
	udp = (void *)ip + ihl;
	if ((void *)(udp + 1) > data_end)
		return 0;
	return udp->dest == bpf_htons(udp_port());
}

SEC("xdp")
int
spinnic_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	int act;

	if (!is_spinnic(data, data_end)) {
		stat_inc(SPINNIC_XDP_PASS);
		return XDP_PASS;
	}
	/* XDP_PASS when no socket is bound at this queue */
	act = bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
	stat_inc(act == XDP_REDIRECT ? SPINNIC_XDP_REDIRECT :
				       SPINNIC_XDP_NO_XSK);
	return act;
}

char _license[] SEC("license") = "Dual BSD/GPL";
