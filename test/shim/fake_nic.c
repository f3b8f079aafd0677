/* SPDX-License-Identifier: BSD-3-Clause */
/* A fake spinnic for libspinnic unit tests (see fake_nic.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "fake_nic.h"

#define FAKE_NID 7
#define FAKE_PID 42

static void
note(struct fake_nic *f, const char *why)
{
	f->bad_msgs++;
	if (f->why[0] == '\0')
		snprintf(f->why, sizeof(f->why), "%s", why);
}

static int
is_pow2(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

/* Check and map the region the client attached. */
static int
attach_region(struct fake_nic *f, const struct spinnic_ctrl_attach *a,
	      int fd)
{
	const struct spinnic_region_hdr *h;
	struct stat st;
	void *p;

	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size != a->region_size) {
		note(f, "region size differs from fstat");
		return -1;
	}
	if ((fcntl(fd, F_GET_SEALS) & F_SEAL_SHRINK) == 0) {
		note(f, "region not sealed against shrinking");
		return -1;
	}
	p = mmap(NULL, a->region_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 0);
	if (p == MAP_FAILED) {
		note(f, "cannot map region");
		return -1;
	}
	h = p;
	if (h->magic != SPINNIC_REGION_MAGIC ||
	    h->version != SPINNIC_ABI_VERSION || h->hdr_size != sizeof(*h) ||
	    h->size != a->region_size || !is_pow2(h->cmd_entries) ||
	    h->cmd_off % 64 != 0 || h->cmd_off + sizeof(struct spinnic_cmd_ring)
	    + (uint64_t)h->cmd_entries * sizeof(struct spinnic_cmd) >
	    h->heap_off || h->heap_off + h->heap_size > h->size) {
		note(f, "region header invalid");
		munmap(p, a->region_size);
		return -1;
	}
	f->region = p;
	f->region_size = a->region_size;
	return 0;
}

static void
serve(struct fake_nic *f, struct spinnic_ctrl_msg *m, int fd)
{
	uint32_t id;
	int op = m->op;

	pthread_mutex_lock(&f->lock);
	id = f->next_id++ % FAKE_MAX_OBJ;
	f->nops[op]++;
	m->status = f->status[op];
	switch (op) {
	case SPINNIC_CTRL_ATTACH:
		if (fd < 0) {
			note(f, "ATTACH without an fd");
			m->status = SPINNIC_PTL_ARG_INVALID;
			break;
		}
		f->attach = m->u.attach;
		if (f->region == NULL && attach_region(f, &m->u.attach, fd) < 0)
			m->status = SPINNIC_PTL_ARG_INVALID;
		m->u.attach.id.nid = FAKE_NID;
		m->u.attach.id.pid = m->u.attach.want_pid == SPINNIC_HANDLE_NONE ?
			FAKE_PID : m->u.attach.want_pid;
		m->u.attach.payload_size = 2048;
		m->u.attach.nhpu = 2;
		m->u.attach.nic_mem_total = 1u << 20;
		break;
	case SPINNIC_CTRL_NI_INIT:
		m->u.ni.ni = 3;
		memset(&m->u.ni.actual, 0, sizeof(m->u.ni.actual));
		m->u.ni.actual.max_entries = 1024;
		m->u.ni.actual.max_mds = 64;
		m->u.ni.actual.max_cts = 16;
		m->u.ni.actual.max_eqs = 16;
		m->u.ni.actual.max_pt_index = 63;
		m->u.ni.actual.max_iovecs = 16;
		m->u.ni.actual.max_list_size = 1024;
		m->u.ni.actual.max_triggered_ops = FAKE_TRIG_MAX;
		m->u.ni.actual.max_msg_size = 1u << 30;
		m->u.ni.actual.max_atomic_size = 2048;
		m->u.ni.actual.max_fetch_atomic_size = 2048;
		break;
	case SPINNIC_CTRL_PT_ALLOC:
		if (m->u.pt.pt_index == SPINNIC_PTL_PT_ANY)
			m->u.pt.pt_index = 5;
		break;
	case SPINNIC_CTRL_EQ_ALLOC:
		m->u.eq.eq = id;
		f->eq_off[id] = m->u.eq.ring_off;
		f->eq_count[id] = m->u.eq.count;
		break;
	case SPINNIC_CTRL_CT_ALLOC:
		m->u.ct.ct = id;
		f->ct_off[id] = m->u.ct.ct_off;
		break;
	case SPINNIC_CTRL_MD_BIND:
		m->u.md.md = 100 + id;
		break;
	case SPINNIC_CTRL_ME_APPEND:
		m->u.me.me = 0xe8000000u | (200 + id); /* all 32 bits used */
		break;
	case SPINNIC_CTRL_CTX_INSTALL:
		m->u.ctx.ctx = 300 + id;
		memcpy(f->ctx_family, m->u.ctx.family, sizeof(f->ctx_family));
		if (m->u.ctx.args_len <= FAKE_BLOB_MAX && f->region != NULL &&
		    m->u.ctx.args_off + m->u.ctx.args_len <= f->region_size) {
			memcpy(f->ctx_args, f->region + m->u.ctx.args_off,
			       m->u.ctx.args_len);
			f->ctx_args_len = m->u.ctx.args_len;
		}
		break;
	case SPINNIC_CTRL_NICMEM_ALLOC:
		m->u.nicmem.handle = 400 + id;
		break;
	case SPINNIC_CTRL_NICMEM_WRITE:
		if (m->u.nicmem.dst_off + m->u.nicmem.len <= FAKE_BLOB_MAX &&
		    m->u.nicmem.src_off + m->u.nicmem.len <= f->region_size)
			memcpy(f->blob + m->u.nicmem.dst_off,
			       f->region + m->u.nicmem.src_off, m->u.nicmem.len);
		else
			m->status = SPINNIC_PTL_ARG_INVALID;
		break;
	default:
		break;
	}
	f->last[op] = *m; /* request and reply fields */
	pthread_mutex_unlock(&f->lock);
}

/* One request; returns 0 to go on, -1 when the connection ended. */
static int
serve_one(struct fake_nic *f)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} cm;
	struct spinnic_ctrl_msg m;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cm.buf, .msg_controllen = sizeof(cm.buf),
	};
	struct pollfd p = { .fd = f->cfd, .events = POLLIN };
	int fd = -1, nfd = 0, bad = 0;
	ssize_t n;

	if (poll(&p, 1, 50) <= 0)
		return 0;
	n = recvmsg(f->cfd, &mh, MSG_CMSG_CLOEXEC);
	if (n <= 0)
		return -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c != NULL;
	     c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (size_t i = 0; i < k; i++) {
				int x;

				memcpy(&x, CMSG_DATA(c) + i * sizeof(int),
				       sizeof(int));
				if (fd < 0)
					fd = x;
				else
					close(x);
				nfd++;
			}
		}
	}
	pthread_mutex_lock(&f->lock);
	f->nfds += nfd;
	if (n != (ssize_t)sizeof(m) || (mh.msg_flags & MSG_CTRUNC) != 0 ||
	    m.version != SPINNIC_ABI_VERSION || m.op == 0 ||
	    m.op >= SPINNIC_CTRL_OP_MAX) {
		note(f, "malformed request");
		bad = 1;
	} else if (nfd > 1 || (nfd == 1 && m.op != SPINNIC_CTRL_ATTACH)) {
		note(f, "unexpected fds");
	}
	pthread_mutex_unlock(&f->lock);
	if (bad) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (m.op == f->hangup_op) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (f->mode == FAKE_SILENT) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (m.op == f->delay_op)
		usleep(f->delay_ms * 1000u);
	serve(f, &m, fd);
	if (fd >= 0)
		close(fd);
	if (send(f->cfd, &m, sizeof(m), MSG_NOSIGNAL) != (ssize_t)sizeof(m))
		return -1;
	return 0;
}

static void *
fake_main(void *arg)
{
	struct fake_nic *f = arg;

	while (__atomic_load_n(&f->running, __ATOMIC_ACQUIRE)) {
		if (f->cfd < 0) {
			struct pollfd p = { .fd = f->lfd, .events = POLLIN };

			if (poll(&p, 1, 50) == 1)
				f->cfd = accept4(f->lfd, NULL, NULL,
						 SOCK_CLOEXEC);
			continue;
		}
		if (serve_one(f) < 0) {
			pthread_mutex_lock(&f->lock);
			close(f->cfd);
			f->cfd = -1;
			pthread_mutex_unlock(&f->lock);
		}
	}
	return NULL;
}

int
fake_nic_start(struct fake_nic *f, enum fake_mode mode)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	memset(f, 0, sizeof(*f));
	f->lfd = f->cfd = -1;
	f->mode = mode;
	f->hangup_op = -1;
	f->delay_op = -1;
	pthread_mutex_init(&f->lock, NULL);
	snprintf(f->dir, sizeof(f->dir), "/tmp/spinnic-shim-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/node0.sock", f->dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
	f->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (f->lfd < 0 || bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(f->lfd, 4) < 0)
		return -1;
	setenv("SPINNIC_SOCKET", f->path, 1);
	f->running = 1;
	if (pthread_create(&f->thr, NULL, fake_main, f) != 0)
		return -1;
	return 0;
}

void
fake_nic_hangup(struct fake_nic *f)
{
	pthread_mutex_lock(&f->lock);
	if (f->cfd >= 0)
		shutdown(f->cfd, SHUT_RDWR);
	pthread_mutex_unlock(&f->lock);
}

void
fake_nic_stop(struct fake_nic *f)
{
	__atomic_store_n(&f->running, 0, __ATOMIC_RELEASE);
	pthread_join(f->thr, NULL);
	if (f->cfd >= 0)
		close(f->cfd);
	if (f->lfd >= 0)
		close(f->lfd);
	if (f->region != NULL)
		munmap(f->region, f->region_size);
	unlink(f->path);
	rmdir(f->dir);
	pthread_mutex_destroy(&f->lock);
}

int
fake_nic_count(struct fake_nic *f, int op)
{
	int n;

	pthread_mutex_lock(&f->lock);
	n = f->nops[op];
	pthread_mutex_unlock(&f->lock);
	return n;
}

int
fake_nic_cmd_pop(struct fake_nic *f, struct spinnic_cmd *cmd_p)
{
	const struct spinnic_region_hdr *h = (const void *)f->region;
	struct spinnic_cmd_ring *r = (void *)(f->region + h->cmd_off);
	uint32_t t = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);

	if (__atomic_load_n(&r->head, __ATOMIC_ACQUIRE) == t)
		return 0;
	*cmd_p = r->slots[t & (h->cmd_entries - 1)];
	__atomic_store_n(&r->tail, t + 1, __ATOMIC_RELEASE);
	return 1;
}

struct spinnic_eq *
fake_nic_eq(struct fake_nic *f, uint32_t eq)
{
	return (struct spinnic_eq *)(f->region + f->eq_off[eq]);
}

struct spinnic_ct *
fake_nic_ct(struct fake_nic *f, uint32_t ct)
{
	return (struct spinnic_ct *)(f->region + f->ct_off[ct]);
}

static void
wake(volatile uint32_t *futex, volatile uint32_t *waiters)
{
	__atomic_add_fetch(futex, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(waiters, __ATOMIC_SEQ_CST) > 0)
		syscall(SYS_futex, futex, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

int
fake_nic_post_event(struct fake_nic *f, uint32_t eq,
		    const struct spinnic_event *ev)
{
	struct spinnic_eq *q = fake_nic_eq(f, eq);
	uint32_t h = q->head;
	struct spinnic_event *s;

	if (h - __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE) > q->mask) {
		__atomic_add_fetch(&q->dropped, 1, __ATOMIC_RELEASE);
		return 0;
	}
	s = &q->slots[h & q->mask];
	*s = *ev;
	s->seq = 0;
	__atomic_store_n(&s->seq, h + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&q->head, h + 1, __ATOMIC_RELEASE);
	wake(&q->futex, &q->waiters);
	return 1;
}

void
fake_nic_ct_set(struct fake_nic *f, uint32_t ct, uint64_t success,
		uint64_t failure)
{
	struct spinnic_ct *c = fake_nic_ct(f, ct);

	__atomic_store_n(&c->success, success, __ATOMIC_RELEASE);
	__atomic_store_n(&c->failure, failure, __ATOMIC_RELEASE);
	wake(&c->futex, &c->waiters);
}
