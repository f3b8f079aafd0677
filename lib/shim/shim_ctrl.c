/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control socket: AF_UNIX SOCK_SEQPACKET to spinnic, fixed-size
 * request/reply (struct spinnic_ctrl_msg), one outstanding request at a
 * time, a bounded wait for every reply. Any transport failure marks the
 * connection dead; every later call fails instead of hanging.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "shim_internal.h"

/* A control reply may be slow when other processes hold the CPUs (a
 * detach waits for the lcores to finish a round); spinnic gone is seen at
 * once (hang-up). So the wait is long, with a notice when it passes
 * CTRL_NOTICE_MS (doc/NOTES.md "Control timeouts"). */
#define CTRL_TIMEOUT_MS 60000
#define CTRL_NOTICE_MS 5000

/* The rank a process picks its node socket by: SPINNIC_RANK, else the
 * launcher's rank on this host (Open MPI's OMPI_COMM_WORLD_LOCAL_RANK,
 * MPICH Hydra's MPI_LOCALRANKID, Slurm's SLURM_LOCALID), else 0.
 * @return the rank, or -EINVAL when the variable set is not a decimal
 * number below SHIM_RANK_MAX (*var names it). */
#define SHIM_RANK_MAX (1 << 20)
#define SHIM_NODES_MAX 4096

static long
socket_rank(const char **var)
{
	static const char *const names[] = {
		"SPINNIC_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
		"MPI_LOCALRANKID", "SLURM_LOCALID",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *v = getenv(names[i]);
		char *end;
		long r;

		if (v == NULL || *v == '\0')
			continue;
		*var = names[i];
		errno = 0;
		r = strtol(v, &end, 10);
		if (errno != 0 || *end != '\0' || r < 0 || r >= SHIM_RANK_MAX ||
		    !(*v >= '0' && *v <= '9'))
			return -EINVAL;
		return r;
	}
	*var = NULL;
	return 0;
}

/* pattern with its one %r/%n replaced by n; %% is a percent sign.
 * @return 0, or -ENAMETOOLONG */
static int
socket_expand(char *buf, size_t len, const char *pat, long n)
{
	size_t o = 0;

	for (const char *p = pat; *p != '\0'; p++) {
		int w;

		if (*p != '%') {
			if (o + 1 >= len)
				return -ENAMETOOLONG;
			buf[o++] = *p;
			continue;
		}
		p++;
		if (*p == '%') {
			if (o + 1 >= len)
				return -ENAMETOOLONG;
			buf[o++] = '%';
			continue;
		}
		w = snprintf(buf + o, len - o, "%ld", n);
		if (w < 0 || (size_t)w >= len - o)
			return -ENAMETOOLONG;
		o += (size_t)w;
	}
	buf[o] = '\0';
	return 0;
}

static bool
is_socket(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

int
shim_ctrl_socket_path(char *buf, size_t len)
{
	const char *s = getenv("SPINNIC_SOCKET");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	const char *var, *p;
	char kind = 0;
	long rank, nodes;
	int rc;

	if (s == NULL || *s == '\0') {
		if (xdg != NULL && *xdg != '\0')
			rc = snprintf(buf, len, "%s/spinnic/node0.sock", xdg);
		else
			rc = snprintf(buf, len, "/run/spinnic/node0.sock");
		return rc < 0 || (size_t)rc >= len ? -ENAMETOOLONG : 0;
	}
	/* at most one %r or %n; %% for a percent sign; nothing else */
	for (p = s; (p = strchr(p, '%')) != NULL; p += 2) {
		if (p[1] == '%')
			continue;
		if ((p[1] != 'r' && p[1] != 'n') || kind != 0) {
			SHIM_ERR("SPINNIC_SOCKET=%s: only one %%r (rank) or %%n "
				 "(rank modulo the nodes there) may appear, and "
				 "%%%% for a percent sign", s);
			return -EINVAL;
		}
		kind = p[1];
	}
	if (kind == 0)
		return socket_expand(buf, len, s, 0);
	rank = socket_rank(&var);
	if (rank < 0) {
		SHIM_ERR("%s=%s is not a rank (a decimal number below %d): "
			 "cannot expand SPINNIC_SOCKET=%s", var, getenv(var),
			 SHIM_RANK_MAX, s);
		return -EINVAL;
	}
	if (kind == 'n') {
		/* the nodes: sockets 0, 1, ... as far as they exist */
		for (nodes = 0; nodes < SHIM_NODES_MAX; nodes++) {
			rc = socket_expand(buf, len, s, nodes);
			if (rc < 0)
				return rc;
			if (!is_socket(buf))
				break;
		}
		/* none: node 0's path, which the connect names in its error */
		rank = nodes > 0 ? rank % nodes : 0;
	}
	return socket_expand(buf, len, s, rank);
}

static int
ctrl_timeout_ms(void)
{
	const char *s = getenv("SPINNIC_CTRL_TIMEOUT_MS");
	long v;

	if (s == NULL || *s == '\0')
		return CTRL_TIMEOUT_MS;
	v = strtol(s, NULL, 10);
	return v > 0 && v < 3600000 ? (int)v : CTRL_TIMEOUT_MS;
}

static void
ctrl_mark_dead(const char *why)
{
	if (!shim_g.dead)
		SHIM_ERR("lost the connection to spinnic (%s); every further "
			 "call fails", why);
	shim_g.dead = 1;
}

/* Send one message, optionally with one fd. @return 0 or -errno. */
static int
ctrl_send(const struct spinnic_ctrl_msg *msg, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = sizeof(*msg) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (fd >= 0) {
		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.buf;
		mh.msg_controllen = sizeof(cm.buf);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do
		n = sendmsg(shim_g.fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == (ssize_t)sizeof(*msg) ? 0 : -EPROTO;
}

/* Receive the reply to msg (same op and seq). @return 0 or -errno. */
static int
ctrl_recv(struct spinnic_ctrl_msg *msg)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} cm;
	struct spinnic_ctrl_msg rep;
	struct iovec iov = { .iov_base = &rep, .iov_len = sizeof(rep) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cm.buf, .msg_controllen = sizeof(cm.buf),
	};
	uint64_t t0 = shim_now_ms();
	bool told = false;
	ssize_t n;

	for (;;) {
		uint64_t waited;

		n = recvmsg(shim_g.fd, &mh, MSG_CMSG_CLOEXEC);
		if (n >= 0 || (errno != EINTR && errno != EAGAIN))
			break;
		if (errno == EINTR)
			continue;
		/* a slice (SO_RCVTIMEO) passed: spinnic is slow or hung */
		waited = shim_now_ms() - t0;
		if (waited >= (uint64_t)shim_g.timeout_ms)
			return -ETIMEDOUT;
		if (!told) {
			SHIM_ERR("spinnic has not answered a control request "
				 "for %llu ms (busy CPUs?); waiting up to %d ms "
				 "(SPINNIC_CTRL_TIMEOUT_MS)",
				 (unsigned long long)waited, shim_g.timeout_ms);
			told = true;
		}
	}
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ECONNRESET;
	/* spinnic never sends fds; close any so they cannot leak */
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c != NULL;
	     c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (size_t i = 0; i < k; i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int),
				       sizeof(int));
				close(fd);
			}
		}
	}
	if (n != (ssize_t)sizeof(rep) ||
	    (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0 ||
	    rep.version != SPINNIC_ABI_VERSION || rep.op != msg->op ||
	    rep.seq != msg->seq)
		return -EPROTO;
	*msg = rep;
	return 0;
}

static int
shim_ctrl_call_fd(struct spinnic_ctrl_msg *msg, int fd)
{
	int rc;

	pthread_mutex_lock(&shim_g.ctrl_lock);
	if (shim_g.dead || shim_g.fd < 0) {
		pthread_mutex_unlock(&shim_g.ctrl_lock);
		return -EIO;
	}
	msg->version = SPINNIC_ABI_VERSION;
	msg->seq = ++shim_g.seq;
	msg->status = 0;
	rc = ctrl_send(msg, fd);
	__atomic_fetch_add(&shim_g.ctrl_round_trips, 1, __ATOMIC_RELAXED);
	if (rc == 0)
		rc = ctrl_recv(msg);
	if (rc < 0) {
		ctrl_mark_dead(rc == -ETIMEDOUT ? "no reply in time" :
			       rc == -EPROTO ? "malformed reply" :
			       strerror(-rc));
		pthread_mutex_unlock(&shim_g.ctrl_lock);
		/* the connection is gone: spinnic unreachable, PTL_FAIL */
		return -EIO;
	}
	pthread_mutex_unlock(&shim_g.ctrl_lock);
	/* the NIC's codes end at ABORTED (shim_consts.h) */
	if (msg->status < 0 || msg->status > SPINNIC_PTL_ABORTED)
		return -EPROTO;
	return shim_errno(msg->status);
}

int
shim_ctrl_call(struct spinnic_ctrl_msg *msg)
{
	return shim_ctrl_call_fd(msg, -1);
}

uint64_t
spin_ctrl_round_trips(void)
{
	return __atomic_load_n(&shim_g.ctrl_round_trips, __ATOMIC_RELAXED);
}

bool
shim_ctrl_gone(void)
{
	struct pollfd p = { .fd = shim_g.fd, .events = POLLRDHUP };

	if (shim_g.dead)
		return true;
	if (shim_g.fd < 0)
		return false;
	if (poll(&p, 1, 0) == 1 &&
	    (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0) {
		pthread_mutex_lock(&shim_g.ctrl_lock);
		ctrl_mark_dead("spinnic closed the connection");
		pthread_mutex_unlock(&shim_g.ctrl_lock);
		return true;
	}
	return false;
}

static int
ctrl_connect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[sizeof(sa.sun_path) + 64];
	struct timeval tv;
	int fd = shim_ctrl_socket_path(path, sizeof(path));

	if (fd == -ENAMETOOLONG || (fd == 0 && strlen(path) >= sizeof(sa.sun_path))) {
		SHIM_ERR("control socket path too long: %s",
			 fd == 0 ? path : getenv("SPINNIC_SOCKET"));
		return -ENAMETOOLONG;
	}
	if (fd < 0)
		return fd;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		SHIM_ERR("socket: %s", strerror(errno));
		return -errno;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = errno;

		if (err == ENOENT || err == ECONNREFUSED)
			SHIM_ERR("spinnic is not running at %s (%s); start it "
				 "or set SPINNIC_SOCKET", path, strerror(err));
		else
			SHIM_ERR("cannot connect to spinnic at %s: %s", path,
				 strerror(err));
		close(fd);
		return -err;
	}
	shim_g.timeout_ms = ctrl_timeout_ms();
	tv.tv_sec = shim_g.timeout_ms / 1000;
	tv.tv_usec = (shim_g.timeout_ms % 1000) * 1000;
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0) {
		int err = errno;

		SHIM_ERR("setsockopt: %s", strerror(err));
		close(fd);
		return -err;
	}
	/* receives wake every notice slice (ctrl_recv counts to the end) */
	if (shim_g.timeout_ms > CTRL_NOTICE_MS) {
		tv.tv_sec = CTRL_NOTICE_MS / 1000;
		tv.tv_usec = 0;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		int err = errno;

		SHIM_ERR("setsockopt: %s", strerror(err));
		close(fd);
		return -err;
	}
	shim_g.fd = fd;
	shim_g.dead = 0;
	return 0;
}

int
shim_ctrl_attach(ptl_pid_t pid)
{
	struct spinnic_ctrl_msg msg;
	struct shim_region *r = &shim_g.region;
	int rc;

	if (shim_g.fd >= 0)
		return shim_g.dead ? -EIO : 0;
	/* connect first: a missing spinnic is one message, not two */
	rc = ctrl_connect();
	if (rc < 0)
		return -EIO; /* logged: PtlNIInit's "spinnic unreachable" */
	rc = shim_region_get();
	if (rc == 0) {
		rc = shim_region_renew();
		if (rc < 0)
			SHIM_ERR("cannot make the host region attachable again "
				 "(a fresh memfd): %s", strerror(-rc));
	}
	if (rc < 0) {
		close(shim_g.fd);
		shim_g.fd = -1;
		return -ENOMEM; /* logged: no host region is no space */
	}
	/* let a non-root spinnic reach malloc'd buffers (process_vm_*);
	 * without Yama this fails harmlessly */
	(void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	/* a fresh attachment starts with an empty command ring */
	__atomic_store_n(&r->ring->head, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&r->ring->tail, 0, __ATOMIC_RELAXED);
	shim_g.cmd_head = 0;
	memset((void *)r->ring->trig_done, 0, sizeof(r->ring->trig_done));
	memset(shim_g.trig_posted, 0, sizeof(shim_g.trig_posted));

	shim_ctrl_prep(&msg, SPINNIC_CTRL_ATTACH);
	msg.u.attach.region_size = r->size;
	msg.u.attach.region_base_va = (uint64_t)(uintptr_t)r->base;
	msg.u.attach.want_pid = pid == PTL_PID_ANY ? SPINNIC_HANDLE_NONE : pid;
	msg.u.attach.client_pid = (int32_t)getpid();
	rc = shim_ctrl_call_fd(&msg, r->memfd);
	if (rc != 0 && !shim_g.dead &&
	    (msg.flags & SPINNIC_CTRL_F_UID_DENIED)) {
		/* spinnic closes the connection: say why, once */
		SHIM_ERR("spinnic refused to attach this process: uid %u is "
			 "not allowed (spinnic --allow-uid)",
			 (unsigned)geteuid());
		shim_g.dead = 1;
	}
	if (rc != 0) {
		if (!shim_g.dead)
			SHIM_ERR("spinnic refused to attach this process: %s",
				 spin_strerror(shim_ptl(rc)));
		shim_ctrl_detach();
		return rc;
	}
	shim_g.id = msg.u.attach.id;
	shim_g.payload_size = msg.u.attach.payload_size;
	shim_g.nhpu = msg.u.attach.nhpu;
	shim_g.nic_mem_total = msg.u.attach.nic_mem_total;
	return 0;
}

void
shim_ctrl_detach(void)
{
	struct spinnic_ctrl_msg msg;

	if (shim_g.fd < 0)
		return;
	if (!shim_g.dead) {
		shim_ctrl_prep(&msg, SPINNIC_CTRL_DETACH);
		(void)shim_ctrl_call(&msg);
	}
	close(shim_g.fd);
	shim_g.fd = -1;
	shim_g.dead = 0;
	/* the NIC dropped this process's access logs with it */
	shim_aa_forget();
}
