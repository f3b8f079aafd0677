/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xsk_probe: bind an AF_XDP socket to one queue of an interface the way
 * DPDK 22.11's af_xdp PMD does with xdp_prog= (libxdp, program load
 * inhibited, the socket stored in the attached program's xsks_map at key
 * queue), and count, for UDP_PORT and UDP_PORT+1, the datagrams that reach
 * the XSK and those that reach kernel UDP sockets bound to those ports.
 * Used by test_xdp.sh to check that the steering program really redirects.
 *
 *   xsk_probe IFACE QUEUE XSKS_MAP_ID UDP_PORT SECONDS
 *
 * Prints "ready" once bound, then after SECONDS one line:
 *   xsk_spin=N xsk_other=N kernel_spin=N kernel_other=N
 * Exit 0, 1 on a setup error, 77 when AF_XDP is unavailable.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#define NUM_FRAMES 256u
#define FRAME_SIZE XSK_UMEM__DEFAULT_FRAME_SIZE

static int
udp_socket(unsigned int port)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons((uint16_t)port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("xsk_probe: udp socket");
		exit(1);
	}
	return fd;
}

static unsigned int
drain_udp(int fd)
{
	char buf[2048];
	unsigned int n = 0;

	while (recv(fd, buf, sizeof(buf), 0) >= 0)
		n++;
	return n;
}

/* UDP destination port of an Ethernet/IPv4/UDP frame, or 0 */
static unsigned int
frame_udp_port(const uint8_t *f, uint32_t len)
{
	unsigned int ihl;

	if (len < 14 + 20 || f[12] != 0x08 || f[13] != 0x00 || f[23] != 17)
		return 0;
	ihl = (f[14] & 0xfu) * 4u;
	if (len < 14 + ihl + 8)
		return 0;
	return ((unsigned int)f[14 + ihl + 2] << 8) | f[14 + ihl + 3];
}

int
main(int argc, char **argv)
{
	struct xsk_socket_config cfg = {
		.rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.tx_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_COPY,
	};
	struct xsk_ring_prod fq, tx;
	struct xsk_ring_cons cq, rx;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	unsigned int xsk_spin = 0, xsk_other = 0, k_spin = 0, k_other = 0;
	unsigned int queue, port, secs, i;
	int map_fd, xsk_fd, rc, u_spin, u_other;
	uint32_t idx;
	struct timespec t0, t;
	void *area;

	if (argc != 6) {
		fprintf(stderr,
			"usage: %s IFACE QUEUE XSKS_MAP_ID UDP_PORT SECONDS\n",
			argv[0]);
		return 1;
	}
	queue = (unsigned int)atoi(argv[2]);
	port = (unsigned int)atoi(argv[4]);
	secs = (unsigned int)atoi(argv[5]);
	u_spin = udp_socket(port);
	u_other = udp_socket(port + 1);

	area = mmap(NULL, NUM_FRAMES * FRAME_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED) {
		perror("xsk_probe: mmap");
		return 1;
	}
	rc = xsk_umem__create(&umem, area, NUM_FRAMES * FRAME_SIZE, &fq, &cq,
			      NULL);
	if (rc) {
		fprintf(stderr, "xsk_probe: umem: %s\n", strerror(-rc));
		return rc == -EAFNOSUPPORT ? 77 : 1;
	}
	rc = xsk_socket__create(&xsk, argv[1], queue, umem, &rx, &tx, &cfg);
	if (rc) {
		fprintf(stderr, "xsk_probe: xsk on %s queue %u: %s\n", argv[1],
			queue, strerror(-rc));
		return rc == -EAFNOSUPPORT ? 77 : 1;
	}
	xsk_fd = xsk_socket__fd(xsk);
	/* what the PMD does after xsk_socket__create() */
	map_fd = bpf_map_get_fd_by_id((uint32_t)atoi(argv[3]));
	if (map_fd < 0 || bpf_map_update_elem(map_fd, &queue, &xsk_fd, 0)) {
		fprintf(stderr, "xsk_probe: xsks_map update: %s\n",
			strerror(errno));
		return 1;
	}
	if (xsk_ring_prod__reserve(&fq, NUM_FRAMES / 2, &idx) !=
	    NUM_FRAMES / 2) {
		fprintf(stderr, "xsk_probe: fill ring\n");
		return 1;
	}
	for (i = 0; i < NUM_FRAMES / 2; i++)
		*xsk_ring_prod__fill_addr(&fq, idx + i) =
			(uint64_t)i * FRAME_SIZE;
	xsk_ring_prod__submit(&fq, NUM_FRAMES / 2);
	printf("ready\n");
	fflush(stdout);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pfd[3] = {
			{.fd = xsk_fd, .events = POLLIN},
			{.fd = u_spin, .events = POLLIN},
			{.fd = u_other, .events = POLLIN},
		};
		uint32_t n, ridx, fidx;

		poll(pfd, 3, 100);
		n = xsk_ring_cons__peek(&rx, 64, &ridx);
		if (n > 0) {
			while (xsk_ring_prod__reserve(&fq, n, &fidx) != n)
				;
			for (i = 0; i < n; i++) {
				const struct xdp_desc *d =
					xsk_ring_cons__rx_desc(&rx, ridx + i);
				const uint8_t *f =
					xsk_umem__get_data(area, d->addr);

				if (frame_udp_port(f, d->len) == port)
					xsk_spin++;
				else
					xsk_other++;
				*xsk_ring_prod__fill_addr(&fq, fidx + i) =
					xsk_umem__extract_addr(d->addr);
			}
			xsk_ring_prod__submit(&fq, n);
			xsk_ring_cons__release(&rx, n);
		}
		k_spin += drain_udp(u_spin);
		k_other += drain_udp(u_other);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((unsigned int)(t.tv_sec - t0.tv_sec) >= secs)
			break;
	}
	printf("xsk_spin=%u xsk_other=%u kernel_spin=%u kernel_other=%u\n",
	       xsk_spin, xsk_other, k_spin, k_other);
	xsk_socket__delete(xsk);
	xsk_umem__delete(umem);
	return 0;
}
