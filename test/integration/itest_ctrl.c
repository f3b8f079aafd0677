/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control socket refuses every malformed request (DESIGN §4): wrong
 * length, bad version or op, requests before ATTACH, descriptors where none
 * belong, ATTACH with no fd, two fds, a pipe, another process's pid, an
 * unsealed or wrongly sized memfd, a region with a bad header. Each is
 * answered with an error or a hang-up, counted, and spinnic keeps serving
 * real clients afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness.h"
#include "spinnic_abi.h"

static int
ctrl_connect(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 2 };
	int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	ITEST_CHECK(s >= 0, "socket: %s", strerror(errno));
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", itest_socket_path(0));
	ITEST_CHECK(connect(s, (struct sockaddr *)&a, sizeof(a)) == 0,
		    "connect %s: %s", a.sun_path, strerror(errno));
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return s;
}

/* Send len bytes of m with up to two fds; -1 if the peer is gone. */
static int
send_raw(int s, const void *m, size_t len, const int *fds, unsigned nfd)
{
	char cbuf[CMSG_SPACE(2 * sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = (void *)m, .iov_len = len };
	struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (nfd > 0) {
		struct cmsghdr *c;

		h.msg_control = cbuf;
		h.msg_controllen = CMSG_SPACE(nfd * sizeof(int));
		c = CMSG_FIRSTHDR(&h);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfd * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfd * sizeof(int));
	}
	return sendmsg(s, &h, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

/*
 * The request must be refused: either an error reply of the exact size
 * with our sequence number, or no reply at all (the header was
 * unreadable) or a hang-up. A success reply fails the test.
 */
static void
expect_refused(int s, const char *what, uint32_t seq, bool header_readable)
{
	struct spinnic_ctrl_msg r;
	ssize_t n = recv(s, &r, sizeof(r), 0);

	if (n <= 0) {
		ITEST_CHECK(!header_readable || n == 0 || errno == EAGAIN ||
			    errno == ECONNRESET,
			    "%s: recv: %s", what, strerror(errno));
		return;
	}
	ITEST_CHECK(n == (ssize_t)sizeof(r), "%s: reply of %zd bytes", what,
		    n);
	ITEST_CHECK(r.status != SPINNIC_PTL_OK, "%s: accepted", what);
	ITEST_CHECK(r.seq == seq, "%s: reply seq %u, sent %u", what, r.seq,
		    seq);
	printf("itest_ctrl: %s refused (status %d)\n", what, r.status);
}

static void
msg_init(struct spinnic_ctrl_msg *m, uint32_t version, uint16_t op,
	 uint32_t seq)
{
	memset(m, 0, sizeof(*m));
	m->version = version;
	m->op = op;
	m->seq = seq;
}

static void
attach_msg(struct spinnic_ctrl_msg *m, uint32_t seq, uint64_t size,
	   int32_t pid)
{
	msg_init(m, SPINNIC_ABI_VERSION, SPINNIC_CTRL_ATTACH, seq);
	m->u.attach.region_size = size;
	m->u.attach.region_base_va = 0x10000000;
	m->u.attach.want_pid = SPINNIC_HANDLE_NONE;
	m->u.attach.client_pid = pid;
}

int
main(void)
{
	const size_t rsize = 2u << 20;
	struct spinnic_ctrl_msg m;
	char big[sizeof(m) + 64] = { 0 };
	int s, p[2], mfd, sealed;
	unsigned refused = 0;
	long long bad;

	itest_init("itest_ctrl", 60);
	itest_spinnic_start(NULL);
	ITEST_CHECK(pipe(p) == 0, "pipe");

	s = ctrl_connect();
	/* lengths: too short to hold a header, short, too long */
	ITEST_CHECK(send_raw(s, "xx", 2, NULL, 0) == 0, "send");
	expect_refused(s, "2-byte message", 0, false), refused++;
	msg_init(&m, SPINNIC_ABI_VERSION, SPINNIC_CTRL_PT_ALLOC, 11);
	ITEST_CHECK(send_raw(s, &m, 26, NULL, 0) == 0, "send");
	expect_refused(s, "26-byte message", 11, true), refused++;
	memcpy(big, &m, sizeof(m));
	((struct spinnic_ctrl_msg *)big)->seq = 12;
	ITEST_CHECK(send_raw(s, big, sizeof(big), NULL, 0) == 0, "send");
	expect_refused(s, "oversized message", 12, true), refused++;
	/* header fields */
	msg_init(&m, 9, SPINNIC_CTRL_PT_ALLOC, 13);
	ITEST_CHECK(send_raw(s, &m, sizeof(m), NULL, 0) == 0, "send");
	expect_refused(s, "version 9", 13, true), refused++;
	msg_init(&m, SPINNIC_ABI_VERSION, 999, 14);
	ITEST_CHECK(send_raw(s, &m, sizeof(m), NULL, 0) == 0, "send");
	expect_refused(s, "op 999", 14, true), refused++;
	msg_init(&m, SPINNIC_ABI_VERSION, 0, 15);
	ITEST_CHECK(send_raw(s, &m, sizeof(m), NULL, 0) == 0, "send");
	expect_refused(s, "op 0", 15, true), refused++;
	msg_init(&m, SPINNIC_ABI_VERSION, SPINNIC_CTRL_PT_ALLOC, 16);
	ITEST_CHECK(send_raw(s, &m, sizeof(m), NULL, 0) == 0, "send");
	expect_refused(s, "PT_ALLOC before ATTACH", 16, true), refused++;
	/* descriptors */
	ITEST_CHECK(send_raw(s, &m, sizeof(m), &p[0], 1) == 0, "send");
	expect_refused(s, "fd with PT_ALLOC", 16, true), refused++;
	attach_msg(&m, 17, rsize, getpid());
	ITEST_CHECK(send_raw(s, &m, sizeof(m), NULL, 0) == 0, "send");
	expect_refused(s, "ATTACH without fd", 17, true), refused++;
	ITEST_CHECK(send_raw(s, &m, sizeof(m), p, 2) == 0, "send");
	expect_refused(s, "ATTACH with two fds", 17, true), refused++;
	ITEST_CHECK(send_raw(s, &m, sizeof(m), &p[0], 1) == 0, "send");
	expect_refused(s, "ATTACH with a pipe", 17, true), refused++;
	close(s);

	s = ctrl_connect();
	mfd = memfd_create("itest", MFD_ALLOW_SEALING);
	ITEST_CHECK(mfd >= 0 && ftruncate(mfd, rsize) == 0, "memfd");
	attach_msg(&m, 20, rsize, getpid() + 1);
	ITEST_CHECK(send_raw(s, &m, sizeof(m), &mfd, 1) == 0, "send");
	expect_refused(s, "ATTACH claiming another pid", 20, true), refused++;
	attach_msg(&m, 21, rsize, getpid());
	ITEST_CHECK(send_raw(s, &m, sizeof(m), &mfd, 1) == 0, "send");
	expect_refused(s, "ATTACH of an unsealed memfd", 21, true), refused++;
	sealed = fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK);
	ITEST_CHECK(sealed == 0, "seal");
	attach_msg(&m, 22, 2 * rsize, getpid());
	ITEST_CHECK(send_raw(s, &m, sizeof(m), &mfd, 1) == 0, "send");
	expect_refused(s, "ATTACH with the wrong size", 22, true), refused++;
	/* right size, sealed, but the region header is all zeroes */
	attach_msg(&m, 23, rsize, getpid());
	ITEST_CHECK(send_raw(s, &m, sizeof(m), &mfd, 1) == 0, "send");
	expect_refused(s, "ATTACH of a region with a bad header", 23, true),
		refused++;
	close(s);
	close(mfd);
	close(p[0]);
	close(p[1]);
	/* a connection that hangs up at once */
	close(ctrl_connect());

	ITEST_CHECK(itest_spinnic_alive(), "spinnic died on bad requests");
	{
		const char *t[] = { "target", "op=put", "len=5000",
				    "buf=region", "seed=2", NULL };
		const char *in[] = { "put", "len=5000", "buf=malloc",
				     "seed=2", NULL };

		itest_run_pair("put after bad requests", 1, t, 0, in);
	}
	itest_spinnic_finish();
	bad = itest_counter(0, "bad_msgs");
	/* the 2-byte message may be dropped before its header is read */
	ITEST_CHECK(bad >= (long long)refused - 1,
		    "node 0 counted %lld bad requests, %u were sent", bad,
		    refused);
	printf("itest_ctrl: ok: %u bad requests refused, %lld counted\n",
	       refused, bad);
	return 0;
}
