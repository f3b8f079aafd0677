/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control plane (DESIGN §4): one pthread per process, not an lcore, started
 * by main.c. It sleeps in io_uring until a node's control socket
 * (D/node<i>.sock) has traffic, a deadline passes or stop is signalled;
 * checks every request before use (STYLE 8); attaches and detaches clients.
 * The one thread that may wait. Checks and limits: app/spinnic/README.md,
 * "Control plane", "Checks", "Detach".
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>
#include <rte_cycles.h>
#include <rte_lcore.h>

#include "spinnic.h"
#include "ptl_nic.h"
#include "spin_rt.h"

/* Largest region a client may share (the ABI allows 64-bit sizes). */
#define REGION_MAX (1ull << 40)
/* Handler arguments copied at CTX_INSTALL. */
#define CTX_ARGS_MAX (1u << 20)
/* Linux 6.5: a pidfd of the peer as it connected (asm/socket.h) */
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif
/* linux/magic.h */
#ifndef HUGETLBFS_MAGIC
#define HUGETLBFS_MAGIC 0x958458f6
#endif
/* Connections of uids that may not attach kept open per node (each is
 * answered at its ATTACH): more are closed at once, so that they cannot
 * take the slots of those who may. */
#define DENIED_CONNS_MAX 4u
/* How often the control thread checks its own receives are armed. */
#define AUDIT_NS 1000000000ull
/* Longest wait at stop for packets in flight to be acknowledged. */
#define DRAIN_MAX_NS 2000000000ull
/* Bad requests tolerated on one connection before it is dropped. */
#define CONN_BAD_MAX 32u
/* Bad requests of one connection that are logged. */
#define CONN_BAD_LOG 8u
/* fds we make room for, so that extra ones are seen (and closed). */
#define CMSG_FDS 8
#define URING_ENTRIES 256u
#define URING_CQ_ENTRIES 4096u

enum ud_kind {
	UD_WAKE = 1,
	UD_ACCEPT,
	UD_RECV,
	UD_PIDFD,   /* the client process exited */
};

/* user_data: kind | generation | index */
static inline uint64_t
ud_make(enum ud_kind k, uint32_t gen, uint32_t idx)
{
	return ((uint64_t)k << 56) | ((uint64_t)(gen & 0xffffff) << 32) |
		idx;
}

struct ctrl_conn {
	struct spinnic_client cl;
	uint32_t gen;
	bool used;
	/* closed, but its recvmsg is still in flight (cancelled): the slot
	 * and its buffers stay taken until that completion comes back */
	bool closing;
	bool recv_armed;
	bool close_after_reply;     /* refused for good (uid policy) */
	int pidfd;                  /* the peer process, -1: none */
	bool pidfd_armed;
	struct msghdr mh;
	struct iovec iov;
	union {
		char buf[CMSG_SPACE(sizeof(int) * CMSG_FDS)];
		struct cmsghdr align;
	} cbuf;
	/* one byte more than a message: MSG_TRUNC says longer anyway */
	union {
		struct spinnic_ctrl_msg msg;
		uint8_t raw[SPINNIC_CTRL_MSG_SIZE + 1];
	} rx;
};

struct ctrl_node {
	int lfd;                    /* listening socket */
	bool accept_armed;
	uint64_t refused;           /* connections over the limit */
	struct ctrl_conn conns[SPINNIC_CLIENTS_MAX];
};

struct spinnic_ctrl {
	struct spinnic *sn;
	struct io_uring ring;
	bool ring_ok;
	pthread_t thread;
	bool thread_ok;
	uint64_t wake_buf;
	struct ctrl_node nodes[SPINNIC_NODES_MAX];
	/* process-wide counters */
	uint64_t bad_msgs;
	uint64_t refused;
	uint64_t uring_errors;
	uint64_t stats_printed;
	uint64_t uid_denied;
	bool pidfd_warned;
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct io_uring_sqe *
sqe_get(struct spinnic_ctrl *c)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&c->ring);

	if (sqe == NULL) {
		/* SQ full: push what is queued and retry once */
		io_uring_submit(&c->ring);
		sqe = io_uring_get_sqe(&c->ring);
	}
	if (sqe == NULL)
		c->uring_errors++;
	return sqe;
}

static int
arm_wake(struct spinnic_ctrl *c)
{
	struct io_uring_sqe *sqe = sqe_get(c);

	if (sqe == NULL)
		return -EBUSY;
	io_uring_prep_read(sqe, c->sn->wake_fd, &c->wake_buf,
			   sizeof(c->wake_buf), 0);
	io_uring_sqe_set_data64(sqe, ud_make(UD_WAKE, 0, 0));
	return 0;
}

static int
arm_accept(struct spinnic_ctrl *c, unsigned ni)
{
	struct ctrl_node *cn = &c->nodes[ni];
	struct io_uring_sqe *sqe;

	if (cn->accept_armed || cn->lfd < 0)
		return 0;
	sqe = sqe_get(c);
	if (sqe == NULL)
		return -EBUSY;
	io_uring_prep_accept(sqe, cn->lfd, NULL, NULL, SOCK_CLOEXEC);
	io_uring_sqe_set_data64(sqe, ud_make(UD_ACCEPT, 0, ni));
	cn->accept_armed = true;
	return 0;
}

static int
arm_recv(struct spinnic_ctrl *c, unsigned ni, unsigned ci)
{
	struct ctrl_conn *cc = &c->nodes[ni].conns[ci];
	struct io_uring_sqe *sqe = sqe_get(c);

	if (sqe == NULL)
		return -EBUSY;
	memset(&cc->mh, 0, sizeof(cc->mh));
	cc->iov.iov_base = cc->rx.raw;
	cc->iov.iov_len = sizeof(cc->rx.raw);
	cc->mh.msg_iov = &cc->iov;
	cc->mh.msg_iovlen = 1;
	cc->mh.msg_control = cc->cbuf.buf;
	cc->mh.msg_controllen = sizeof(cc->cbuf.buf);
	io_uring_prep_recvmsg(sqe, cc->cl.sock, &cc->mh, MSG_CMSG_CLOEXEC);
	io_uring_sqe_set_data64(sqe, ud_make(UD_RECV, cc->gen,
					     ni * SPINNIC_CLIENTS_MAX + ci));
	cc->recv_armed = true;
	return 0;
}

/*
 * Watch the peer process: its connection can outlive it (a child that
 * inherited the socket keeps it open), and its pid could then name another
 * process for process_vm_*; the client is detached when it exits.
 */
static int
arm_pidfd(struct spinnic_ctrl *c, unsigned ni, unsigned ci)
{
	struct ctrl_conn *cc = &c->nodes[ni].conns[ci];
	struct io_uring_sqe *sqe;

	if (cc->pidfd < 0 || cc->pidfd_armed)
		return 0;
	sqe = sqe_get(c);
	if (sqe == NULL)
		return -EBUSY;
	io_uring_prep_poll_add(sqe, cc->pidfd, POLLIN);
	io_uring_sqe_set_data64(sqe, ud_make(UD_PIDFD, cc->gen,
					     ni * SPINNIC_CLIENTS_MAX + ci));
	cc->pidfd_armed = true;
	return 0;
}

/* A pidfd of the process at the other end of @p fd, or -1. */
static int
peer_pidfd(int fd, pid_t pid)
{
	socklen_t len = sizeof(int);
	int pfd = -1;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pfd, &len) == 0 &&
	    len == sizeof(int) && pfd >= 0)
		return pfd;
	/* older kernels: the pid as it is now (the peer is connected and
	 * has not been reaped yet in the common case) */
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd >= 0)
		(void)fcntl(pfd, F_SETFD, FD_CLOEXEC);
	return pfd;
}

/* ---- sockets ------------------------------------------------------------ */

static int
dir_make(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;
	char *p;

	/* missing parents too (mkdir -p), each 0700 */
	snprintf(path, sizeof(path), "%s", dir);
	for (p = path + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) != 0 && errno != EEXIST)
			break;
		*p = '/';
	}
	if (mkdir(dir, 0700) == 0)
		return 0;
	if (errno != EEXIST) {
		int err = errno;

		SPINNIC_LOG(ERR, "socket directory %s: %s (choose one with --socket-dir)",
			    dir, strerror(err));
		return -err;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		SPINNIC_LOG(ERR, "socket directory %s: exists and is not a directory",
			    dir);
		return -ENOTDIR;
	}
	if (st.st_mode & 077)
		SPINNIC_LOG(WARNING, "socket directory %s: mode %03o lets other users reach the control sockets",
			    dir, (unsigned)(st.st_mode & 0777));
	return 0;
}

/* Remove a socket file nobody listens on; refuse to steal a live one. */
static int
stale_unlink(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		SPINNIC_LOG(ERR, "%s exists and is not a socket", path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	if (rc == 0) {
		SPINNIC_LOG(ERR, "%s is served by another spinnic", path);
		return -EADDRINUSE;
	}
	if (unlink(path) != 0 && errno != ENOENT)
		return -errno;
	SPINNIC_LOG(INFO, "removed stale socket %s", path);
	return 0;
}

static int
listen_open(struct spinnic_node *node)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, rc;

	if (strlen(node->sock_path) >= sizeof(sa.sun_path)) {
		SPINNIC_LOG(ERR, "socket path too long: %s", node->sock_path);
		return -ENAMETOOLONG;
	}
	rc = stale_unlink(node->sock_path);
	if (rc != 0)
		return rc;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		SPINNIC_LOG(ERR, "socket: %s", strerror(-rc));
		return rc;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", node->sock_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    chmod(node->sock_path, 0600) != 0 ||
	    listen(fd, SPINNIC_CLIENTS_MAX) != 0) {
		rc = -errno;
		SPINNIC_LOG(ERR, "%s: %s", node->sock_path, strerror(-rc));
		close(fd);
		return rc;
	}
	return fd;
}

/* ---- replies -------------------------------------------------------------- */

static void conn_close(struct spinnic_ctrl *c, unsigned ni, unsigned ci);

static int
reply_send(struct ctrl_conn *cc, const struct spinnic_ctrl_msg *rep)
{
	ssize_t n;

	n = send(cc->cl.sock, rep, sizeof(*rep), MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n == (ssize_t)sizeof(*rep))
		return 0;
	return n < 0 ? -errno : -EIO;
}

/* Count (and log the first few of) a rejected request. */
static void
bad_count(struct spinnic_ctrl *c, struct spinnic_node *node,
	  struct ctrl_conn *cc, const char *why)
{
	c->bad_msgs++;
	node->ctrl.bad_msgs++;
	cc->cl.bad_msgs++;
	if (cc->cl.attached)
		__atomic_fetch_add(&node->cl_stats[cc->cl.pid].bad_msgs, 1,
				   __ATOMIC_RELAXED);
	if (cc->cl.bad_msgs <= CONN_BAD_LOG)
		SPINNIC_LOG(NOTICE, "node %u: client pid %d: bad control message: %s",
			    node->index, (int)cc->cl.os_pid, why);
}

/* Count a rejected request and answer it when its header can be echoed. */
static void
bad_msg(struct spinnic_ctrl *c, struct spinnic_node *node,
	struct ctrl_conn *cc, bool hdr_ok, int status, const char *why)
{
	struct spinnic_ctrl_msg rep;

	bad_count(c, node, cc, why);
	if (!hdr_ok)
		return;
	memset(&rep, 0, sizeof(rep));
	rep.version = SPINNIC_ABI_VERSION;
	rep.op = cc->rx.msg.op;
	rep.flags = cc->rx.msg.flags;
	rep.seq = cc->rx.msg.seq;
	rep.status = status;
	(void)reply_send(cc, &rep);
}

/* ---- clients ---------------------------------------------------------------- */

static void
region_release(void *arg, void *region, size_t size)
{
	(void)arg;
	munmap(region, size);
}

/*
 * Tear a client down (hang-up, DETACH, stop): lib/portals stops matching
 * and cancels its operations, the engine drops its in-flight messages,
 * lib/spin frees its contexts and NIC memory, and once no lcore can still
 * hold the client (quiesce) the attach reference goes; the region is
 * unmapped when the last in-flight reference does (region_release).
 */
static void
client_detach(struct spinnic_node *node, struct spinnic_client *cl)
{
	struct ptl_client *pc = cl->pc;
	uint64_t t0, t1, t2, t3, t4;

	if (!cl->attached)
		return;
	cl->detaching = true;
	t0 = now_ns();
	__atomic_store_n(&node->clients[cl->pid], NULL, __ATOMIC_RELEASE);
	ptl_client_get(pc);
	ptl_client_detach(node->nic, pc);
	t1 = now_ns();
	spinnic_engine_client_detach(node, cl);
	t2 = now_ns();
	spin_owner_detach(node->rt, cl->pid);
	t3 = now_ns();
	spinnic_quiesce(node->sn);
	t4 = now_ns();
	if (t4 - t0 > 500000000ull)
		SPINNIC_LOG(WARNING, "node %u: detach of client pid %d took %" PRIu64 " ms (portals %" PRIu64 ", engine %" PRIu64 ", sPIN %" PRIu64 ", quiesce %" PRIu64 ")",
			    node->index, (int)cl->os_pid, (t4 - t0) / 1000000,
			    (t1 - t0) / 1000000, (t2 - t1) / 1000000,
			    (t3 - t2) / 1000000, (t4 - t3) / 1000000);
	cl->attached = false;
	cl->pc = NULL;
	cl->region = NULL;
	node->ctrl.clients--;
	node->ctrl.detaches++;
	SPINNIC_LOG(INFO, "node %u: client pid %d detached (Portals pid %u)",
		    node->index, (int)cl->os_pid, cl->pid);
	ptl_client_put(pc);
	cl->detaching = false;
}

static int
errno_status(int rc)
{
	return rc == 0 ? SPINNIC_PTL_OK : ptl_errno_to_status(rc);
}

/* lib/spin errors: a handle, name or range the client got wrong is an
 * invalid argument; no NIC memory or table slot is no space. */
static int
spin_status(int rc)
{
	switch (rc) {
	case 0:
		return SPINNIC_PTL_OK;
	case -EINVAL:
	case -ENOENT:
	case -EPERM:
	case -ERANGE:
		return SPINNIC_PTL_ARG_INVALID;
	case -ENOMEM:
	case -ENOSPC:
		return SPINNIC_PTL_NO_SPACE;
	case -EBUSY:
		return SPINNIC_PTL_IN_USE;
	default:
		return SPINNIC_PTL_FAIL;
	}
}

/*
 * Per-user policy (DESIGN §4): root and spinnic's own effective uid may
 * always attach (they can reach spinnic's memory anyway), others only when
 * --allow-uid names them (or says any).
 */
static bool
uid_allowed(const struct spinnic_cfg *cfg, uint32_t uid)
{
	unsigned i;

	if (cfg->allow_any_uid || uid == 0 || uid == (uint32_t)geteuid())
		return true;
	for (i = 0; i < cfg->nb_allow_uids; i++)
		if (cfg->allow_uids[i] == uid)
			return true;
	return false;
}

/*
 * Map a client's region so that its pages cannot go from under spinnic.
 * F_SEAL_SHRINK alone leaves fallocate(PUNCH_HOLE) and MADV_REMOVE: a
 * hugetlb hole whose page cannot come back (no free hugepage left) turns
 * the next direct copy into a SIGBUS that ends every node and client.
 * Once spinnic's mapping exists, F_SEAL_FUTURE_WRITE forbids both (EPERM),
 * and any new writable mapping or write() of the file, while the mappings
 * made so far (the client's, this one) keep working. A hugetlb hole made
 * before the seal is then filled by populating the whole mapping, which
 * fails (EFAULT) where a fault would SIGBUS; a hole in ordinary shmem is
 * refilled with a zeroed page at the fault (no SIGBUS), so it is not
 * populated (that would charge every client's whole region at attach).
 * The seal is for good: the same file cannot be mapped writable again, so
 * a region is attached once (the shim brings a fresh memfd to a later
 * attach, shim_region_renew()).
 * @return 0 with *region_p mapped; -EPERM (cannot be sealed), -ENOMEM (no
 *   memory or hugepage behind it): logged and counted, nothing mapped
 */
static int
region_map_pinned(struct spinnic_node *node, const struct spinnic_client *cl,
		  int fd, uint64_t size, int seals, void **region_p)
{
	struct statfs sfs;
	void *region;
	int rc;

	if (seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)) {
		SPINNIC_LOG(NOTICE, "node %u: client pid %d: attach refused: the region is already sealed against writes (attached before, or sealed by the client); each attach needs a fresh memfd",
			    node->index, (int)cl->os_pid);
		node->ctrl.region_refused++;
		return -EPERM;
	}
	region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (region == MAP_FAILED) {
		rc = -errno;
		SPINNIC_LOG(WARNING, "node %u: client pid %d: mmap of %" PRIu64 " bytes: %s",
			    node->index, (int)cl->os_pid, size, strerror(-rc));
		node->ctrl.errors++;
		return -ENOMEM;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE) != 0) {
		rc = -errno;
		SPINNIC_LOG(NOTICE, "node %u: client pid %d: attach refused: cannot seal the region against hole punching (F_SEAL_FUTURE_WRITE, Linux 5.1): %s",
			    node->index, (int)cl->os_pid, strerror(-rc));
		munmap(region, size);
		node->ctrl.region_refused++;
		return -EPERM;
	}
	if (fstatfs(fd, &sfs) == 0 && sfs.f_type == HUGETLBFS_MAGIC &&
	    madvise(region, size, MADV_POPULATE_WRITE) != 0) {
		rc = -errno;
		if (rc == -EINVAL)
			SPINNIC_LOG(NOTICE, "node %u: client pid %d: attach refused: cannot populate the hugetlb region (MADV_POPULATE_WRITE, Linux 5.14): %s",
				    node->index, (int)cl->os_pid, strerror(-rc));
		else
			SPINNIC_LOG(NOTICE, "node %u: client pid %d: attach refused: a page of the hugetlb region cannot be backed (%s): a hole punched before attach, and no free hugepage",
				    node->index, (int)cl->os_pid, strerror(-rc));
		munmap(region, size);
		node->ctrl.region_refused++;
		return -ENOMEM;
	}
	*region_p = region;
	return 0;
}

static void
do_attach(struct spinnic_ctrl *c, struct spinnic_node *node,
	  struct ctrl_conn *cc, int fd, struct spinnic_ctrl_msg *rep)
{
	const struct spinnic_ctrl_attach *a = &cc->rx.msg.u.attach;
	struct spinnic_client *cl = &cc->cl;
	struct ptl_client *pc = NULL;
	struct spinnic_pid id;
	struct stat st;
	void *region;
	int seals, rc;

	if (cl->attached) {
		rep->status = SPINNIC_PTL_ARG_INVALID;
		bad_count(c, node, cc,
			"ATTACH on an attached connection");
		goto out_close;
	}
	if (!uid_allowed(&node->sn->cfg, cl->uid)) {
		/* a policy refusal, not a malformed request */
		c->uid_denied++;
		node->ctrl.uid_denied++;
		rep->status = SPINNIC_PTL_FAIL;
		rep->flags |= SPINNIC_CTRL_F_UID_DENIED;
		cc->close_after_reply = true;
		if (node->ctrl.uid_denied <= CONN_BAD_LOG)
			SPINNIC_LOG(NOTICE, "node %u: client pid %d: uid %u may not attach (--allow-uid); closing its connection",
				    node->index, (int)cl->os_pid, cl->uid);
		goto out_close;
	}
	if (a->client_pid != cl->os_pid) {
		rep->status = SPINNIC_PTL_ARG_INVALID;
		bad_count(c, node, cc,
			"ATTACH client_pid differs from the socket peer");
		goto out_close;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		rep->status = SPINNIC_PTL_ARG_INVALID;
		bad_count(c, node, cc,
			"ATTACH fd is not a memory file");
		goto out_close;
	}
	if ((uint64_t)st.st_size != a->region_size ||
	    a->region_size < sizeof(struct spinnic_region_hdr) ||
	    a->region_size > REGION_MAX) {
		rep->status = SPINNIC_PTL_ARG_INVALID;
		bad_count(c, node, cc,
			"ATTACH region_size differs from the fd's size or is out of range");
		goto out_close;
	}
	/* a region that can shrink would SIGBUS the NIC */
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK)) {
		rep->status = SPINNIC_PTL_ARG_INVALID;
		bad_count(c, node, cc,
			"ATTACH region is not sealed against shrinking (F_SEAL_SHRINK)");
		goto out_close;
	}
	rc = region_map_pinned(node, cl, fd, a->region_size, seals, &region);
	if (rc < 0) {
		rep->status = rc == -ENOMEM ? SPINNIC_PTL_NO_SPACE :
			      SPINNIC_PTL_ARG_INVALID;
		goto out_close;
	}
	close(fd);
	fd = -1;
	rc = ptl_client_attach(node->nic, region, a->region_size,
			       a->region_base_va, cl->os_pid, cl->uid,
			       a->want_pid, &pc);
	if (rc != 0) {
		SPINNIC_LOG(NOTICE, "node %u: client pid %d: attach refused: %s",
			    node->index, (int)cl->os_pid, strerror(-rc));
		node->ctrl.errors++;
		munmap(region, a->region_size);
		rep->status = errno_status(rc);
		return;
	}
	id = ptl_client_id(pc);
	if (id.pid >= SPINNIC_CLIENTS_MAX) {
		/* ptl_nic_conf.max_clients bounds pids; never trust it */
		SPINNIC_LOG(ERR, "node %u: Portals pid %u out of range",
			    node->index, id.pid);
		ptl_client_set_release(pc, region_release, NULL);
		ptl_client_detach(node->nic, pc);
		node->ctrl.errors++;
		rep->status = SPINNIC_PTL_FAIL;
		return;
	}
	ptl_client_set_release(pc, region_release, NULL);
	cl->pc = pc;
	cl->pid = id.pid;
	cl->region = region;
	cl->region_size = a->region_size;
	cl->region_base_va = a->region_base_va;
	cl->region_fd = -1;
	cl->attached = true;
	node->ctrl.clients++;
	node->ctrl.attaches++;
	spinnic_client_stats_reset(node, id.pid);
	__atomic_store_n(&node->clients[id.pid], pc, __ATOMIC_RELEASE);
	rep->u.attach.id = id;
	rep->u.attach.payload_size = node->payload;
	rep->u.attach.nhpu = node->sn->cfg.hpus;
	rep->u.attach.nic_mem_total = node->sn->cfg.nic_mem;
	rep->status = SPINNIC_PTL_OK;
	SPINNIC_LOG(INFO, "node %u: client pid %d uid %u attached: Portals id %u.%u, region %" PRIu64 " bytes",
		    node->index, (int)cl->os_pid, cl->uid, id.nid, id.pid,
		    a->region_size);
	return;
out_close:
	if (fd >= 0)
		close(fd);
}

static void
do_ctx_install(struct spinnic_node *node, struct ctrl_conn *cc,
	       struct spinnic_ctrl_msg *rep)
{
	const struct spinnic_ctrl_ctx *req = &cc->rx.msg.u.ctx;
	uint32_t handle = SPINNIC_HANDLE_NONE;
	void *args = NULL;
	const void *src;
	int rc;

	if (req->args_len > CTX_ARGS_MAX) {
		rep->status = SPINNIC_PTL_ARG_INVALID;
		return;
	}
	if (req->args_len != 0) {
		src = ptl_client_region_ptr(cc->cl.pc, req->args_off,
					    req->args_len);
		if (src == NULL) {
			rep->status = SPINNIC_PTL_ARG_INVALID;
			return;
		}
		/* private copy: the family validates what it installs */
		args = malloc(req->args_len);
		if (args == NULL) {
			rep->status = SPINNIC_PTL_NO_SPACE;
			return;
		}
		memcpy(args, src, req->args_len);
	}
	rc = spin_rt_ctx_install(node->rt, cc->cl.pid, req, args, &handle);
	free(args);
	rep->status = spin_status(rc);
	if (rc == 0)
		rep->u.ctx.ctx = handle;
}

static void
do_spin(struct spinnic_node *node, struct ctrl_conn *cc,
	struct spinnic_ctrl_msg *rep)
{
	const struct spinnic_ctrl_msg *req = &cc->rx.msg;
	struct spinnic_client *cl = &cc->cl;
	uint32_t handle;
	const void *src;
	int rc;

	switch (req->op) {
	case SPINNIC_CTRL_CTX_INSTALL:
		do_ctx_install(node, cc, rep);
		return;
	case SPINNIC_CTRL_CTX_FREE:
		if (ptl_nic_ctx_in_use(node->nic, cl->pc, req->u.ctx.ctx)) {
			rep->status = SPINNIC_PTL_IN_USE;
			return;
		}
		rc = spin_rt_ctx_free(node->rt, cl->pid, req->u.ctx.ctx);
		break;
	case SPINNIC_CTRL_NICMEM_ALLOC:
		rc = spin_rt_nicmem_alloc(node->rt, cl->pid, req->u.nicmem.size,
				       &handle);
		if (rc == 0)
			rep->u.nicmem.handle = handle;
		break;
	case SPINNIC_CTRL_NICMEM_WRITE:
		src = ptl_client_region_ptr(cl->pc, req->u.nicmem.src_off,
					    req->u.nicmem.len);
		if (src == NULL) {
			rep->status = SPINNIC_PTL_ARG_INVALID;
			return;
		}
		rc = spin_rt_nicmem_write(node->rt, cl->pid,
				       req->u.nicmem.handle,
				       req->u.nicmem.dst_off, src,
				       req->u.nicmem.len);
		break;
	case SPINNIC_CTRL_NICMEM_FREE:
		rc = spin_rt_nicmem_free(node->rt, cl->pid,
				      req->u.nicmem.handle);
		break;
	default:
		rc = -EOPNOTSUPP;
		break;
	}
	rep->status = spin_status(rc);
}

/* A request lib/portals answers (everything but attach, detach, batch and
 * the sPIN ops): @p req is a private copy or the receive buffer. */
static void
ptl_op_run(struct spinnic_node *node, struct ctrl_conn *cc,
	   const struct spinnic_ctrl_msg *req, struct spinnic_ctrl_msg *rep)
{
	int rc;

	/* the context of an entry must be a live one of this client */
	if (req->op == SPINNIC_CTRL_ME_APPEND &&
	    req->u.me.ctx != SPINNIC_HANDLE_NONE) {
		rc = spin_rt_ctx_get(node->rt, cc->cl.pid, req->u.me.ctx);
		if (rc != 0) {
			rep->status = SPINNIC_PTL_ARG_INVALID;
			return;
		}
		spin_rt_ctx_put(node->rt, req->u.me.ctx);
	}
	/* an access log consumed on the NIC: a live context of this
	 * client whose family has an access handler */
	if (req->op == SPINNIC_CTRL_AA_LOG_CREATE &&
	    (req->u.aa.flags & SPINNIC_AA_LOG_HANDLER) &&
	    spin_rt_ctx_access_ok(node->rt, cc->cl.pid,
				  req->u.aa.ctx) != 0) {
		rep->status = SPINNIC_PTL_ARG_INVALID;
		return;
	}
	rc = ptl_nic_ctrl(node->nic, cc->cl.pc, req, rep);
	if (rc != 0)
		rep->status = errno_status(rc);
}

/* ---- BATCH: lib/portals applies the records (ptl_nic_ctrl_batch) ------ */

static void
batch_run(void *arg, const struct spinnic_ctrl_msg *req,
	  struct spinnic_ctrl_msg *rep)
{
	struct ctrl_conn *cc = arg;

	ptl_op_run(cc->cl.node, cc, req, rep);
}

/* BATCH of an attached client: each record as if it came alone (the
 * context check of ME_APPEND included), counted per node. */
static void
do_batch(struct spinnic_node *node, struct ctrl_conn *cc,
	 struct spinnic_ctrl_msg *rep)
{
	struct ptl_batch_stats st = { 0 };

	ptl_nic_ctrl_batch(cc->cl.pc, &cc->rx.msg, rep, batch_run, cc, &st);
	node->ctrl.batches++;
	node->ctrl.batch_recs += st.recs;
	node->ctrl.batch_refused += st.refused;
	node->ctrl.batch_rollbacks += st.rollbacks;
	node->ctrl.batch_undo_failed += st.undo_failed;
}

/* A well-formed request of an attached (or attaching) client. */
static void
request_run(struct spinnic_ctrl *c, unsigned ni, unsigned ci, int fd)
{
	struct spinnic_node *node = c->sn->nodes[ni];
	struct ctrl_conn *cc = &c->nodes[ni].conns[ci];
	const struct spinnic_ctrl_msg *req = &cc->rx.msg;
	const uint64_t bad_before = cc->cl.bad_msgs;
	struct spinnic_ctrl_msg rep;
	uint64_t t0 = now_ns(), dt;
	int rc;

	memcpy(&rep, req, sizeof(rep));
	rep.status = SPINNIC_PTL_OK;
	switch (req->op) {
	case SPINNIC_CTRL_ATTACH:
		do_attach(c, node, cc, fd, &rep);
		break;
	case SPINNIC_CTRL_DETACH:
		client_detach(node, &cc->cl);
		break;
	case SPINNIC_CTRL_CTX_INSTALL:
	case SPINNIC_CTRL_CTX_FREE:
	case SPINNIC_CTRL_NICMEM_ALLOC:
	case SPINNIC_CTRL_NICMEM_WRITE:
	case SPINNIC_CTRL_NICMEM_FREE:
		do_spin(node, cc, &rep);
		break;
	default:
		ptl_op_run(node, cc, req, &rep);
		break;
	case SPINNIC_CTRL_BATCH:
		do_batch(node, cc, &rep);
		break;
	}
	/* every other request waits meanwhile (one control thread): say
	 * which one took long (the harness repeats it in a test's output) */
	dt = now_ns() - t0;
	if (dt > 500000000ull)
		SPINNIC_LOG(WARNING, "node %u: %s (control op %u) of client pid %d took %" PRIu64 " ms",
			    node->index, req->op == SPINNIC_CTRL_ATTACH ?
			    "attach" : "request", (unsigned)req->op,
			    (int)cc->cl.os_pid, dt / 1000000u);
	rep.version = SPINNIC_ABI_VERSION;
	/* a request rejected as malformed is counted in bad_msgs only */
	if (rep.status != SPINNIC_PTL_OK && cc->cl.bad_msgs == bad_before)
		node->ctrl.errors++;
	rc = reply_send(cc, &rep);
	if (rc != 0) {
		SPINNIC_LOG(NOTICE, "node %u: client pid %d: reply: %s; dropping it",
			    node->index, (int)cc->cl.os_pid, strerror(-rc));
		conn_close(c, ni, ci);
	} else if (cc->close_after_reply) {
		conn_close(c, ni, ci);
	}
}

/* Check one received message; run it when sane. */
static void
message_handle(struct spinnic_ctrl *c, unsigned ni, unsigned ci, int len)
{
	struct spinnic_node *node = c->sn->nodes[ni];
	struct ctrl_conn *cc = &c->nodes[ni].conns[ci];
	const struct spinnic_ctrl_msg *req = &cc->rx.msg;
	const bool hdr_ok = len >= (int)offsetof(struct spinnic_ctrl_msg, u);
	int fds[CMSG_FDS * 2];
	unsigned nfds = 0, i;
	bool ctrunc = (cc->mh.msg_flags & MSG_CTRUNC) != 0;
	struct cmsghdr *cm;
	int fd = -1;

	node->ctrl.msgs++;
	cc->cl.msgs++;
	/* collect every fd that came along, whatever happens next */
	for (cm = CMSG_FIRSTHDR(&cc->mh); cm != NULL;
	     cm = CMSG_NXTHDR(&cc->mh, cm)) {
		size_t n;

		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_RIGHTS ||
		    cm->cmsg_len < CMSG_LEN(0))
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n && nfds < RTE_DIM(fds); i++)
			memcpy(&fds[nfds++], CMSG_DATA(cm) + i * sizeof(int),
			       sizeof(int));
	}
	if ((cc->mh.msg_flags & MSG_TRUNC) || len != SPINNIC_CTRL_MSG_SIZE) {
		bad_msg(c, node, cc, hdr_ok, SPINNIC_PTL_ARG_INVALID,
			(cc->mh.msg_flags & MSG_TRUNC) ?
			"longer than a control message" :
			"shorter than a control message");
	} else if (ctrunc) {
		bad_msg(c, node, cc, true, SPINNIC_PTL_ARG_INVALID,
			"control data truncated (MSG_CTRUNC)");
	} else if (req->version != SPINNIC_ABI_VERSION) {
		bad_msg(c, node, cc, true, SPINNIC_PTL_ARG_INVALID,
			"ABI version mismatch");
	} else if (req->op < SPINNIC_CTRL_ATTACH ||
		   req->op >= SPINNIC_CTRL_OP_MAX) {
		bad_msg(c, node, cc, true, SPINNIC_PTL_ARG_INVALID,
			"unknown op");
	} else if (req->op == SPINNIC_CTRL_ATTACH && nfds != 1) {
		bad_msg(c, node, cc, true, SPINNIC_PTL_ARG_INVALID,
			"ATTACH needs exactly one fd");
	} else if (req->op != SPINNIC_CTRL_ATTACH && nfds != 0) {
		bad_msg(c, node, cc, true, SPINNIC_PTL_ARG_INVALID,
			"fd passed with an op other than ATTACH");
	} else if (req->op != SPINNIC_CTRL_ATTACH && !cc->cl.attached) {
		bad_msg(c, node, cc, true, SPINNIC_PTL_NO_INIT,
			"request before ATTACH");
	} else {
		if (req->op == SPINNIC_CTRL_ATTACH) {
			fd = fds[0];
			nfds = 0; /* do_attach owns it */
		}
		request_run(c, ni, ci, fd);
	}
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	if (cc->used && cc->cl.bad_msgs >= CONN_BAD_MAX) {
		SPINNIC_LOG(WARNING, "node %u: client pid %d: %" PRIu64 " bad control messages, disconnecting",
			    node->index, (int)cc->cl.os_pid,
			    cc->cl.bad_msgs);
		conn_close(c, ni, ci);
	}
}

static void
conn_close(struct spinnic_ctrl *c, unsigned ni, unsigned ci)
{
	struct spinnic_node *node = c->sn->nodes[ni];
	struct ctrl_conn *cc = &c->nodes[ni].conns[ci];

	if (!cc->used || cc->closing)
		return;
	client_detach(node, &cc->cl);
	close(cc->cl.sock);
	cc->cl.sock = -1;
	if (cc->pidfd_armed) {
		struct io_uring_sqe *sqe = sqe_get(c);

		/* the poll holds the file: cancel it; its completion is
		 * stale (generation) */
		if (sqe != NULL) {
			io_uring_prep_cancel64(sqe, ud_make(UD_PIDFD, cc->gen,
				ni * SPINNIC_CLIENTS_MAX + ci), 0);
			io_uring_sqe_set_data64(sqe, 0);
		}
		cc->pidfd_armed = false;
	}
	if (cc->pidfd >= 0)
		close(cc->pidfd);
	cc->pidfd = -1;
	if (cc->recv_armed) {
		/*
		 * Closed while its recvmsg is in flight (the process exited
		 * with the socket still open elsewhere): the kernel may yet
		 * write into this slot's buffers, so the slot is not reused
		 * until that completion (cancelled here) comes back.
		 */
		struct io_uring_sqe *sqe = sqe_get(c);

		if (sqe != NULL) {
			io_uring_prep_cancel64(sqe, ud_make(UD_RECV, cc->gen,
				ni * SPINNIC_CLIENTS_MAX + ci), 0);
			io_uring_sqe_set_data64(sqe, 0);
		}
		cc->closing = true;
		return;
	}
	cc->used = false;
	cc->gen++;
}

static void
pidfd_done(struct spinnic_ctrl *c, uint32_t gen, unsigned idx, int res)
{
	unsigned ni = idx / SPINNIC_CLIENTS_MAX, ci = idx % SPINNIC_CLIENTS_MAX;
	struct ctrl_conn *cc;
	struct pollfd p;

	if (ni >= c->sn->nb_nodes)
		return;
	cc = &c->nodes[ni].conns[ci];
	if (!cc->used || (cc->gen & 0xffffff) != gen)
		return; /* stale: the connection went first */
	cc->pidfd_armed = false;
	if (res < 0) {
		if (res != -ECANCELED)
			c->uring_errors++;
		return;
	}
	/* an ordinary exit closed the socket first: its hang-up completion
	 * is on its way, or was not processed yet */
	p.fd = cc->cl.sock;
	p.events = POLLRDHUP;
	p.revents = 0;
	if (poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLRDHUP)) != 0) {
		conn_close(c, ni, ci);
		return;
	}
	c->sn->nodes[ni]->ctrl.orphaned++;
	SPINNIC_LOG(NOTICE, "node %u: client pid %d exited, its connection is still open (inherited by another process): detaching it",
		    ni, (int)cc->cl.os_pid);
	conn_close(c, ni, ci);
}

static void
accept_done(struct spinnic_ctrl *c, unsigned ni, int fd)
{
	struct spinnic_node *node = c->sn->nodes[ni];
	struct ctrl_node *cn = &c->nodes[ni];
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	unsigned ci;

	cn->accept_armed = false;
	if (fd < 0) {
		if (fd != -EINTR && fd != -ECONNABORTED && fd != -EAGAIN) {
			SPINNIC_LOG(WARNING, "node %u: accept: %s", ni,
				    strerror(-fd));
			c->uring_errors++;
		}
		return;
	}
	for (ci = 0; ci < SPINNIC_CLIENTS_MAX; ci++)
		if (!cn->conns[ci].used)
			break;
	if (ci == SPINNIC_CLIENTS_MAX) {
		SPINNIC_LOG(WARNING, "node %u: more than %u client connections, refusing one",
			    ni, SPINNIC_CLIENTS_MAX);
		cn->refused++;
		c->refused++;
		close(fd);
		return;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 ||
	    clen != sizeof(cred)) {
		SPINNIC_LOG(WARNING, "node %u: SO_PEERCRED: %s", ni,
			    strerror(errno));
		c->refused++;
		close(fd);
		return;
	}
	if (!uid_allowed(&c->sn->cfg, cred.uid)) {
		unsigned k, denied = 0;

		for (k = 0; k < SPINNIC_CLIENTS_MAX; k++)
			if (cn->conns[k].used &&
			    !uid_allowed(&c->sn->cfg, cn->conns[k].cl.uid))
				denied++;
		if (denied >= DENIED_CONNS_MAX) {
			c->uid_denied++;
			node->ctrl.uid_denied++;
			cn->refused++;
			c->refused++;
			close(fd);
			return;
		}
	}
	{
		struct ctrl_conn *cc = &cn->conns[ci];
		uint32_t gen = cc->gen;

		memset(cc, 0, sizeof(*cc));
		cc->gen = gen;
		cc->used = true;
		cc->cl.node = node;
		cc->cl.sock = fd;
		cc->cl.region_fd = -1;
		cc->cl.os_pid = cred.pid;
		cc->cl.uid = cred.uid;
		cc->cl.gid = cred.gid;
		cc->cl.pid = SPINNIC_HANDLE_NONE;
		cc->pidfd = peer_pidfd(fd, cred.pid);
		if (cc->pidfd < 0 && !c->pidfd_warned) {
			c->pidfd_warned = true;
			SPINNIC_LOG(WARNING, "pidfd of client pid %d: %s; a client whose connection outlives it stays attached until the connection closes",
				    (int)cred.pid, strerror(errno));
		}
		if (arm_recv(c, ni, ci) != 0 || arm_pidfd(c, ni, ci) != 0)
			conn_close(c, ni, ci);
	}
}

static void
recv_done(struct spinnic_ctrl *c, uint32_t gen, unsigned idx, int res)
{
	unsigned ni = idx / SPINNIC_CLIENTS_MAX, ci = idx % SPINNIC_CLIENTS_MAX;
	struct ctrl_conn *cc;

	if (ni >= c->sn->nb_nodes)
		return;
	cc = &c->nodes[ni].conns[ci];
	if (!cc->used || (cc->gen & 0xffffff) != gen)
		return; /* stale completion of a closed connection */
	cc->recv_armed = false;
	if (cc->closing) {
		/* the last completion of a closed connection: free now */
		cc->closing = false;
		cc->used = false;
		cc->gen++;
		return;
	}
	if (res <= 0) {
		/* hang-up (0) or error: the client is gone */
		if (res < 0 && res != -ECONNRESET)
			SPINNIC_LOG(NOTICE, "node %u: client pid %d: recvmsg: %s",
				    ni, (int)cc->cl.os_pid, strerror(-res));
		conn_close(c, ni, ci);
		return;
	}
	message_handle(c, ni, ci, res);
	if (cc->used && arm_recv(c, ni, ci) != 0)
		conn_close(c, ni, ci);
}

/* ---- thread ---------------------------------------------------------------- */

static void
shutdown_all(struct spinnic_ctrl *c)
{
	struct spinnic *sn = c->sn;
	unsigned ni, ci;

	for (ni = 0; ni < sn->nb_nodes; ni++) {
		struct ctrl_node *cn = &c->nodes[ni];

		if (cn->lfd >= 0) {
			close(cn->lfd);
			cn->lfd = -1;
			unlink(sn->nodes[ni]->sock_path);
		}
		/* the engines still run: detach hooks may need them */
		for (ci = 0; ci < SPINNIC_CLIENTS_MAX; ci++)
			conn_close(c, ni, ci);
	}
}

/*
 * Once a second: every listening socket has an accept armed and every open
 * connection a receive. Each is re-armed where it completes, so neither
 * should ever be missing; if one is, say so and arm it, rather than leave
 * its clients waiting for replies that never come.
 */
static void
audit(struct spinnic_ctrl *c)
{
	unsigned ni, ci;

	for (ni = 0; ni < c->sn->nb_nodes; ni++) {
		struct ctrl_node *cn = &c->nodes[ni];

		if (!cn->accept_armed && cn->lfd >= 0) {
			SPINNIC_LOG(WARNING, "node %u: control socket had no accept armed: armed now",
				    ni);
			c->uring_errors++;
			(void)arm_accept(c, ni);
		}
		for (ci = 0; ci < SPINNIC_CLIENTS_MAX; ci++) {
			struct ctrl_conn *cc = &cn->conns[ci];

			if (!cc->used || cc->closing || cc->recv_armed)
				continue;
			SPINNIC_LOG(WARNING, "node %u: connection of client pid %d had no receive armed: armed now",
				    ni, (int)cc->cl.os_pid);
			c->uring_errors++;
			if (arm_recv(c, ni, ci) != 0)
				conn_close(c, ni, ci);
		}
	}
}

/*
 * Let what is in flight land before the lcores stop: resends, acks still
 * owed to peers, parked packets (reliable delivery). Bounded: a peer on
 * another machine may be gone.
 */
static void
drain_wait(struct spinnic *sn)
{
	const uint64_t until = now_ns() + DRAIN_MAX_NS;
	unsigned ni, quiet_rounds = 0;

	while (now_ns() < until && quiet_rounds < 3) {
		bool quiet = true;

		for (ni = 0; ni < sn->nb_nodes; ni++)
			quiet = quiet && spinnic_engine_quiet(sn->nodes[ni]);
		quiet_rounds = quiet ? quiet_rounds + 1 : 0;
		usleep(2000);
	}
}

static void *
ctrl_thread(void *arg)
{
	struct spinnic_ctrl *c = arg;
	struct spinnic *sn = c->sn;
	const uint64_t start = now_ns();
	uint64_t stats_next = UINT64_MAX, end = UINT64_MAX;
	uint64_t audit_next = start + AUDIT_NS;
	unsigned ni;

	if (sn->cfg.stats_interval != 0)
		stats_next = start + sn->cfg.stats_interval * 1000000000ull;
	if (sn->cfg.duration != 0)
		end = start + sn->cfg.duration * 1000000000ull;

	if (arm_wake(c) != 0)
		goto fatal;
	for (ni = 0; ni < sn->nb_nodes; ni++)
		if (arm_accept(c, ni) != 0)
			goto fatal;

	while (!__atomic_load_n(&sn->stop, __ATOMIC_ACQUIRE)) {
		struct io_uring_cqe *cqe;
		uint64_t now, next = RTE_MIN(RTE_MIN(stats_next, end), audit_next);
		unsigned head, seen = 0;
		int rc;

		if (next != UINT64_MAX) {
			struct __kernel_timespec ts;
			uint64_t d;

			now = now_ns();
			d = next > now ? next - now : 0;
			ts.tv_sec = (long long)(d / 1000000000ull);
			ts.tv_nsec = (long long)(d % 1000000000ull);
			rc = io_uring_submit_and_wait_timeout(&c->ring, &cqe,
							      1, &ts, NULL);
		} else {
			rc = io_uring_submit_and_wait(&c->ring, 1);
		}
		if (rc < 0 && rc != -ETIME && rc != -EINTR &&
		    rc != -EAGAIN && rc != -EBUSY) {
			SPINNIC_LOG(ERR, "control thread: io_uring wait: %s",
				    strerror(-rc));
			goto fatal;
		}
		io_uring_for_each_cqe(&c->ring, head, cqe) {
			uint64_t ud = cqe->user_data;
			uint32_t gen = (uint32_t)(ud >> 32) & 0xffffff;
			uint32_t idx = (uint32_t)ud;
			int res = cqe->res;
			uint64_t t0 = now_ns();

			seen++;
			switch ((enum ud_kind)(ud >> 56)) {
			case UD_WAKE:
				if (arm_wake(c) != 0)
					goto fatal;
				break;
			case UD_ACCEPT:
				if (idx < sn->nb_nodes) {
					accept_done(c, idx, res);
					if (arm_accept(c, idx) != 0)
						goto fatal;
				}
				break;
			case UD_RECV:
				recv_done(c, gen, idx, res);
				break;
			case UD_PIDFD:
				pidfd_done(c, gen, idx, res);
				break;
			default:
				break;
			}
			/* every client waits for this thread: say when it lags */
			if (now_ns() - t0 > 1000000000ull)
				SPINNIC_LOG(WARNING, "control thread: one completion (kind %u) took %" PRIu64 " ms",
					    (unsigned)(ud >> 56),
					    (now_ns() - t0) / 1000000);
		}
		io_uring_cq_advance(&c->ring, seen);

		now = now_ns();
		if (now >= audit_next) {
			audit(c);
			audit_next = now + AUDIT_NS;
		}
		if (now >= stats_next) {
			spinnic_stats_print(sn, stdout);
			spinnic_ctrl_stats_print(sn, stdout);
			fflush(stdout);
			c->stats_printed++;
			stats_next = now + sn->cfg.stats_interval *
				1000000000ull;
		}
		if (now >= end) {
			SPINNIC_LOG(INFO, "--duration %u s reached",
				    sn->cfg.duration);
			spinnic_stop(sn);
		}
	}
	shutdown_all(c);
	drain_wait(sn);
	__atomic_store_n(&sn->lcores_stop, 1, __ATOMIC_RELEASE);
	return NULL;
fatal:
	spinnic_stop(sn);
	shutdown_all(c);
	__atomic_store_n(&sn->lcores_stop, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* One line: who may attach, and the NIC memory each client may hold. */
static void
policy_log(const struct spinnic_cfg *cfg)
{
	char uids[SPINNIC_ALLOW_UIDS_MAX * 11 + 64];
	size_t n = 0;
	unsigned i;

	if (cfg->allow_any_uid) {
		snprintf(uids, sizeof(uids), "any uid");
	} else {
		n = (size_t)snprintf(uids, sizeof(uids), "uid 0");
		if (geteuid() != 0)
			n += (size_t)snprintf(uids + n, sizeof(uids) - n,
					      ", %u", (unsigned)geteuid());
		for (i = 0; i < cfg->nb_allow_uids && n < sizeof(uids); i++)
			n += (size_t)snprintf(uids + n, sizeof(uids) - n,
					      ", %u", cfg->allow_uids[i]);
	}
	if (cfg->nic_mem_per_client != 0)
		SPINNIC_LOG(INFO, "clients: %s may attach; NIC memory per client %" PRIu64 " bytes",
			    uids, cfg->nic_mem_per_client);
	else
		SPINNIC_LOG(INFO, "clients: %s may attach; no NIC memory cap per client",
			    uids);
}

int
spinnic_ctrl_start(struct spinnic *sn)
{
	struct io_uring_params p;
	struct spinnic_ctrl *c;
	unsigned ni;
	int rc;

	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->sn = sn;
	for (ni = 0; ni < SPINNIC_NODES_MAX; ni++)
		c->nodes[ni].lfd = -1;
	sn->ctrl = c;

	if (sn->cfg.socket_path[0] == '\0') {
		rc = dir_make(sn->cfg.socket_dir);
		if (rc != 0)
			return rc;
	}
	for (ni = 0; ni < sn->nb_nodes; ni++) {
		struct spinnic_node *node = sn->nodes[ni];
		int n;

		if (sn->cfg.socket_path[0] != '\0')
			n = snprintf(node->sock_path, sizeof(node->sock_path),
				     "%s", sn->cfg.socket_path);
		else
			n = snprintf(node->sock_path, sizeof(node->sock_path),
				     "%s/node%u.sock", sn->cfg.socket_dir,
				     ni);
		if (n < 0 || (size_t)n >= sizeof(node->sock_path))
			return -ENAMETOOLONG;
		rc = listen_open(node);
		if (rc < 0)
			return rc;
		c->nodes[ni].lfd = rc;
	}

	policy_log(&sn->cfg);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = URING_CQ_ENTRIES;
	rc = io_uring_queue_init_params(URING_ENTRIES, &c->ring, &p);
	if (rc != 0) {
		SPINNIC_LOG(ERR, "io_uring: %s (the control thread needs io_uring; check kernel.io_uring_disabled)",
			    strerror(-rc));
		return rc;
	}
	c->ring_ok = true;

	rc = rte_ctrl_thread_create(&c->thread, "spinnic-ctrl", NULL,
				    ctrl_thread, c);
	if (rc != 0) {
		SPINNIC_LOG(ERR, "control thread: %s", strerror(rc));
		return -rc;
	}
	c->thread_ok = true;
	if (sn->cfg.ctrl_lcore >= 0) {
		rte_cpuset_t set = rte_lcore_cpuset((unsigned)sn->cfg.ctrl_lcore);

		rc = pthread_setaffinity_np(c->thread, sizeof(set), &set);
		if (rc != 0)
			SPINNIC_LOG(WARNING, "control thread affinity to lcore %d: %s",
				    sn->cfg.ctrl_lcore, strerror(rc));
	}
	return 0;
}

void
spinnic_ctrl_stop(struct spinnic *sn)
{
	struct spinnic_ctrl *c = sn->ctrl;
	unsigned ni;

	if (c == NULL)
		return;
	if (c->thread_ok) {
		spinnic_stop(sn);
		pthread_join(c->thread, NULL);
		c->thread_ok = false;
	} else {
		shutdown_all(c);
	}
	if (c->ring_ok)
		io_uring_queue_exit(&c->ring);
	for (ni = 0; ni < SPINNIC_NODES_MAX; ni++)
		if (c->nodes[ni].lfd >= 0) {
			close(c->nodes[ni].lfd);
			if (ni < sn->nb_nodes)
				unlink(sn->nodes[ni]->sock_path);
		}
	sn->ctrl = NULL;
	free(c);
}

void
spinnic_ctrl_stats_print(struct spinnic *sn, FILE *f)
{
	const struct spinnic_ctrl *c = sn->ctrl;

	if (c == NULL)
		return;
	fprintf(f, "control: bad_msgs %" PRIu64 " refused_conns %" PRIu64 " uring_errors %" PRIu64 " uid_denied %" PRIu64 "\n",
		__atomic_load_n(&c->bad_msgs, __ATOMIC_RELAXED),
		__atomic_load_n(&c->refused, __ATOMIC_RELAXED),
		__atomic_load_n(&c->uring_errors, __ATOMIC_RELAXED),
		__atomic_load_n(&c->uid_denied, __ATOMIC_RELAXED));
}
