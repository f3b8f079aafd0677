/* SPDX-License-Identifier: BSD-3-Clause */
/* Frame offsets and byte helpers of the wire tests (test_ptl_wire.c,
 * test_wire_auth.c): frames as spinnic_wire_build() lays them out. */
#ifndef WIRE_TEST_H
#define WIRE_TEST_H

#include <stdint.h>

#define PORT 5777
#define ETH 14
#define IP (ETH)
#define UDP (ETH + 20)
#define SH (ETH + 20 + 8)

static inline uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* recompute the IPv4 header checksum after an edit */
static inline void
ip_fix(uint8_t *f)
{
	uint32_t sum = 0;
	int i, ihl = (f[IP] & 0xf) * 4;

	f[IP + 10] = f[IP + 11] = 0;
	for (i = 0; i < ihl; i += 2)
		sum += (uint32_t)((f[IP + i] << 8) | f[IP + i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put16(f + IP + 10, (uint16_t)~sum);
}

/* reference: byte-wise one's-complement sum over pseudo header + UDP */
static inline uint16_t
ref_udp_sum(const uint8_t *f, int len)
{
	int ulen = len - UDP, i;
	uint32_t sum = 0;

	for (i = 0; i < 8; i += 2)
		sum += (uint32_t)((f[IP + 12 + i] << 8) | f[IP + 13 + i]);
	sum += 17 + (uint32_t)ulen;
	for (i = 0; i + 1 < ulen; i += 2)
		sum += (uint32_t)((f[UDP + i] << 8) | f[UDP + i + 1]);
	if (ulen & 1)
		sum += (uint32_t)(f[UDP + ulen - 1] << 8);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

#endif
