/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A client cannot take the pages of its host region from under spinnic
 * (DESIGN §4, §11; doc/NOTES.md "Client memory faults"). Before, the
 * region was sealed only against shrinking: a client could punch a hole
 * in its hugetlb memfd (fallocate PUNCH_HOLE, MADV_REMOVE), map every free
 * hugepage, then put into its own ME inside the hole, and spinnic's direct
 * copy died of SIGBUS with every node and client. Now spinnic seals the
 * region F_SEAL_FUTURE_WRITE once mapped, and populates a hugetlb one.
 *
 * Tried here, with a bystander client on the same node doing puts before,
 * during and after each attack (it must never notice):
 *  - hugetlb region (when hugepages exist; as root the test reserves a few
 *    and gives them back): PUNCH_HOLE, MADV_REMOVE and a new writable
 *    mapping of the region fd fail with EPERM; then every free hugepage is
 *    taken and a put lands inside the would-be hole, with its events;
 *  - the same with an ordinary-page (shmem) region;
 *  - after each, PtlFini / PtlInit / PtlNIInit in the same process: the
 *    shim brings a fresh memfd (the old one stays sealed), at the same
 *    address with the same contents, and puts work;
 *  - a hole punched before attach (hugetlb): filled at attach, puts work;
 *  - a raw ATTACH of a memfd already sealed against writes: refused with
 *    a status, counted (region_refused), spinnic serves on.
 * Clients are forked children of this program linked with libspinnic
 * (its internals give the region fd, shim_internal.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <portals4.h>

#include "harness.h"
#include "kid.h"
#include "shim_internal.h"
#include "spinnic_abi.h"

#define KID_EV_MS 10000
#define HUGE_SZ (2u << 20)
#define BUF_SZ (6u << 20)      /* holds a whole aligned hugepage */
#define PUT_LEN (64u << 10)
#define HP_WANT 24             /* free hugepages the hugetlb cases need */
#define NR_HP "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
#define FREE_HP "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"

/* ---- clients: forked children (kid.h) ------------------------------------ */

/*
 * Put @p len bytes of @p pattern from a region MD into the caller's own ME
 * at @p dst (match bits 0x5, offset @p off) and wait for PUT, SEND and ACK,
 * each successful. @return 0, or -1 with @p why filled.
 */
static int
self_put(struct kid_ni *n, uint8_t *dst, ptl_size_t dst_len, ptl_size_t off,
	 size_t len, uint8_t pattern, char *why, size_t wlen)
{
	ptl_handle_me_t meh;
	ptl_handle_md_t mdh;
	ptl_event_t ev;
	ptl_md_t md;
	ptl_me_t me;
	uint8_t *src = spin_host_alloc(len);
	unsigned which, got = 0;
	int rc = -1, k;

	if (src == NULL) {
		snprintf(why, wlen, "spin_host_alloc");
		return -1;
	}
	memset(src, pattern, len);
	memset(&me, 0, sizeof(me));
	me.start = dst;
	me.length = dst_len;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_USE_ONCE |
		     PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_UNLINK_DISABLE;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = 0x5;
	memset(&md, 0, sizeof(md));
	md.start = src;
	md.length = len;
	md.eq_handle = n->eq;
	md.ct_handle = PTL_CT_NONE;
	if (PtlMEAppend(n->ni, n->pt, &me, PTL_PRIORITY_LIST, NULL, &meh) !=
	    PTL_OK || PtlMDBind(n->ni, &md, &mdh) != PTL_OK) {
		snprintf(why, wlen, "ME/MD");
		goto out;
	}
	if (PtlPut(mdh, 0, len, PTL_ACK_REQ, n->id, n->pt, 0x5, off, NULL,
		   0) != PTL_OK) {
		snprintf(why, wlen, "PtlPut");
		goto out_md;
	}
	for (k = 0; k < 3; k++) {
		if (PtlEQPoll(&n->eq, 1, KID_EV_MS, &ev, &which) != PTL_OK) {
			snprintf(why, wlen, "event %d of 3 missing (have %#x)",
				 k, got);
			goto out_md;
		}
		if (ev.ni_fail_type != PTL_NI_OK) {
			snprintf(why, wlen, "event %d failed: %d",
				 (int)ev.type, (int)ev.ni_fail_type);
			goto out_md;
		}
		got |= 1u << ev.type;
	}
	rc = 0;
	for (size_t i = 0; i < len; i++)
		if (dst[off + i] != pattern) {
			snprintf(why, wlen, "byte %zu is %#x, want %#x", i,
				 dst[off + i], pattern);
			rc = -1;
			break;
		}
out_md:
	PtlMDRelease(mdh);
out:
	spin_host_free(src);
	return rc;
}

static long
meminfo(const char *key)
{
	char line[128];
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, strlen(key)) == 0) {
			v = strtol(line + strlen(key), NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

struct eaten {
	void *p[64];
	size_t len[64];
	unsigned n;
	long pages;
};

/* Take every free hugepage of the default size (the attack's second
 * step): free and not reserved for a mapping already made. Reserving them
 * is enough (a shared mapping reserves at mmap): a fault that needs a page
 * beyond its reservation then finds none, and nothing is zeroed, so the
 * pool is short for as little time as possible. */
static void
hugepages_eat(struct eaten *e)
{
	long hp = meminfo("Hugepagesize:") * 1024;

	memset(e, 0, sizeof(*e));
	while (e->n < 64 && hp > 0) {
		long avail = meminfo("HugePages_Free:") -
			     meminfo("HugePages_Rsvd:");
		size_t len;
		void *p = MAP_FAILED;

		/* another process may take some meanwhile: halve and retry */
		for (; avail > 0 && p == MAP_FAILED; avail /= 2) {
			len = (size_t)avail * (size_t)hp;
			p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB, -1,
				 0);
		}
		if (p == MAP_FAILED)
			break;
		e->p[e->n] = p;
		e->len[e->n++] = len;
		e->pages += (long)(len / (size_t)hp);
	}
}

static void
hugepages_give_back(struct eaten *e)
{
	while (e->n > 0) {
		e->n--;
		munmap(e->p[e->n], e->len[e->n]);
	}
}

/* ---- the bystander: puts into its own ME whenever told ----------------- */

static int
kid_bystander(struct kid *self, void *arg)
{
	struct kid_ni n;
	char line[64], why[128];
	uint8_t *buf, round = 0;

	(void)arg;
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	buf = spin_host_alloc(PUT_LEN);
	KCHECK(self, buf != NULL, "spin_host_alloc");
	kid_say(self, "ready");
	while (kid_line(self, line, sizeof(line), 60000) == 0) {
		round++;
		KCHECK(self, self_put(&n, buf, PUT_LEN, 0, PUT_LEN,
				      (uint8_t)(0x40 + round), why,
				      sizeof(why)) == 0,
		       "round %u: %s", round, why);
		kid_say(self, "ok %u", round);
	}
	kid_ni_close(&n);
	return 0;
}

static void
bystander_round(struct kid *b, const char *when)
{
	char line[128];

	kid_tell(b, "put");
	kid_expect(b, "ok", line, sizeof(line));
	printf("itest_region: bystander put %s: ok\n", when);
}

/* ---- the attacker ------------------------------------------------------ */

/*
 * Reports "region hugetlb=H", "punch RC ERRNO", "remove RC ERRNO",
 * "remap ERRNO"; on "eat" takes every free hugepage ("eaten N"); on "put"
 * puts into its ME inside the hole ("put ok"), gives the hugepages back;
 * then re-attaches ("reattach ok") and reports "ok".
 */
static int
kid_attacker(struct kid *self, void *arg)
{
	struct shim_region *r = &shim_g.region;
	struct kid_ni n;
	struct eaten e = { 0 };
	char line[64], why[128];
	uint64_t buf_off, hole;
	uint8_t *buf;
	void *map;
	int rc, err, old_fd;

	(void)arg;
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	kid_say(self, "region hugetlb=%d", r->hugetlb);
	buf = spin_host_alloc(BUF_SZ);
	KCHECK(self, buf != NULL, "spin_host_alloc");
	memset(buf, 0x11, BUF_SZ);
	buf_off = (uint64_t)(buf - r->base);
	hole = (buf_off + HUGE_SZ - 1) & ~(uint64_t)(HUGE_SZ - 1);
	KCHECK(self, hole + HUGE_SZ <= buf_off + BUF_SZ, "no page in buf");

	rc = fallocate(r->memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		       (off_t)hole, HUGE_SZ);
	kid_say(self, "punch %d %d", rc, rc == 0 ? 0 : errno);
	rc = madvise(r->base + hole, HUGE_SZ, MADV_REMOVE);
	kid_say(self, "remove %d %d", rc, rc == 0 ? 0 : errno);
	map = mmap(NULL, HUGE_SZ, PROT_READ | PROT_WRITE, MAP_SHARED,
		   r->memfd, 0);
	err = map == MAP_FAILED ? errno : 0;
	if (map != MAP_FAILED)
		munmap(map, HUGE_SZ);
	kid_say(self, "remap %d", err);

	KCHECK(self, kid_line(self, line, sizeof(line), 30000) == 0, "line");
	if (strcmp(line, "eat") == 0) {
		hugepages_eat(&e);
		kid_say(self, "eaten %ld free %ld reserved %ld", e.pages,
			meminfo("HugePages_Free:"),
			meminfo("HugePages_Rsvd:"));
		KCHECK(self, kid_line(self, line, sizeof(line), 30000) == 0,
		       "line");
	}
	/* the put lands in the (would-be) hole; this process does not
	 * touch it before (no hugepage left for its own fault either) */
	rc = self_put(&n, buf, BUF_SZ, hole - buf_off + 4096, PUT_LEN, 0x7e,
		      why, sizeof(why));
	hugepages_give_back(&e);
	KCHECK(self, rc == 0, "put into the hole: %s", why);
	kid_say(self, "put ok");

	/* attach again: a fresh memfd, same address and contents */
	old_fd = r->memfd;
	kid_ni_close(&n);
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	KCHECK(self, buf[hole - buf_off + 4096] == 0x7e &&
		     buf[0] == 0x11 && buf[BUF_SZ - 1] == 0x11,
	       "region contents changed across re-attach");
	rc = fallocate(r->memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		       (off_t)hole, HUGE_SZ);
	KCHECK(self, rc == -1 && errno == EPERM,
	       "punch after re-attach: rc %d (%s)", rc, strerror(errno));
	KCHECK(self, self_put(&n, buf, BUF_SZ, hole - buf_off, PUT_LEN, 0x3c,
			      why, sizeof(why)) == 0,
	       "put after re-attach: %s", why);
	kid_say(self, "reattach ok fd %d -> %d hugetlb=%d", old_fd, r->memfd,
		r->hugetlb);
	kid_ni_close(&n);
	kid_say(self, "ok");
	return 0;
}

static void
attack(struct kid *b, bool huge, bool have_hp)
{
	const char *name = huge ? "attacker-hugetlb" : "attacker-shmem";
	char line[160];
	int hugetlb, err;
	struct kid k;

	kid_start(&k, name, 0, huge, kid_attacker, NULL);
	kid_expect(&k, "region hugetlb=", line, sizeof(line));
	hugetlb = atoi(line + strlen("region hugetlb="));
	/* the shim falls back to ordinary pages when hugepages run short
	 * (other processes share them): the hugetlb steps follow the region */
	ITEST_CHECK(huge || !hugetlb, "%s: region hugetlb=%d", name, hugetlb);
	if (huge && !hugetlb)
		printf("itest_region: %s: no hugetlb region (%s): the exhaustion step is skipped\n",
		       name, have_hp ? "hugepages taken meanwhile" :
		       "too few hugepages");
	/* answers first, checks after the put: on a region that can still
	 * be punched, show what the put then does to spinnic */
	kid_expect(&k, "punch ", line, sizeof(line));
	{
		char punch[160], remove[160], remap[160];

		snprintf(punch, sizeof(punch), "%s", line);
		kid_expect(&k, "remove ", line, sizeof(line));
		snprintf(remove, sizeof(remove), "%s", line);
		kid_expect(&k, "remap ", line, sizeof(line));
		snprintf(remap, sizeof(remap), "%s", line);
		if (hugetlb) {
			kid_tell(&k, "eat");
			kid_expect(&k, "eaten ", line, sizeof(line));
			printf("itest_region: %s: %s\n", name, line);
			bystander_round(b, "while no hugepage is free");
		}
		kid_tell(&k, "put");
		kid_expect(&k, "put ok", line, sizeof(line));
		printf("itest_region: %s: put into the punched range: ok\n",
		       name);
		ITEST_CHECK(strcmp(punch, "punch -1 1") == 0 &&
			    strcmp(remove, "remove -1 1") == 0,
			    "%s: the region could be punched: \"%s\", \"%s\" "
			    "(want EPERM)", name, punch, remove);
		err = atoi(remap + strlen("remap "));
		ITEST_CHECK(err == EPERM,
			    "%s: a new writable mapping of the region fd: %s",
			    name, err == 0 ? "made" : strerror(err));
	}
	printf("itest_region: %s: PUNCH_HOLE, MADV_REMOVE, writable mmap: EPERM\n",
	       name);
	kid_expect(&k, "reattach ok", line, sizeof(line));
	printf("itest_region: %s: %s\n", name, line);
	kid_expect(&k, "ok", line, sizeof(line));
	kid_end(&k);
	bystander_round(b, "after the attack");
}

/* ---- a hole punched before attach -------------------------------------- */

static int
kid_early_hole(struct kid *self, void *arg)
{
	struct shim_region *r = &shim_g.region;
	struct kid_ni n;
	char why[128];
	uint64_t buf_off, hole;
	uint8_t *buf;
	int rc;

	(void)arg;
	buf = spin_host_alloc(BUF_SZ);    /* creates the region, unattached */
	KCHECK(self, buf != NULL, "spin_host_alloc");
	memset(buf, 0x22, BUF_SZ);
	buf_off = (uint64_t)(buf - r->base);
	hole = (buf_off + HUGE_SZ - 1) & ~(uint64_t)(HUGE_SZ - 1);
	rc = fallocate(r->memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		       (off_t)hole, HUGE_SZ);
	KCHECK(self, rc == 0, "punch before attach: %s", strerror(errno));
	if (kid_ni_open(self, &n, 64) != 0)
		return 1;
	KCHECK(self, self_put(&n, buf, BUF_SZ, hole - buf_off + 8192,
			      PUT_LEN, 0x5a, why, sizeof(why)) == 0,
	       "put into a hole punched before attach: %s", why);
	KCHECK(self, buf[hole - buf_off] == 0 && buf[0] == 0x22,
	       "hole not zero-filled");
	kid_ni_close(&n);
	kid_say(self, "ok hugetlb=%d", r->hugetlb);
	return 0;
}

/* ---- a raw ATTACH of a region already sealed against writes ------------ */

static void
attach_sealed(void)
{
	const size_t rsize = 2u << 20;
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 5 };
	struct spinnic_ctrl_msg m, rep;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int s, mfd;
	ssize_t got;

	mfd = memfd_create("itest-sealed", MFD_ALLOW_SEALING);
	ITEST_CHECK(mfd >= 0 && ftruncate(mfd, (off_t)rsize) == 0 &&
		    fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
			  F_SEAL_FUTURE_WRITE) == 0,
		    "sealed memfd: %s", strerror(errno));
	s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", itest_socket_path(0));
	ITEST_CHECK(s >= 0 && connect(s, (struct sockaddr *)&a,
				      sizeof(a)) == 0,
		    "connect: %s", strerror(errno));
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	memset(&m, 0, sizeof(m));
	m.version = SPINNIC_ABI_VERSION;
	m.op = SPINNIC_CTRL_ATTACH;
	m.seq = 7;
	m.u.attach.region_size = rsize;
	m.u.attach.region_base_va = 0x10000000;
	m.u.attach.want_pid = SPINNIC_HANDLE_NONE;
	m.u.attach.client_pid = getpid();
	c = CMSG_FIRSTHDR(&h);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &mfd, sizeof(int));
	ITEST_CHECK(sendmsg(s, &h, MSG_NOSIGNAL) == (ssize_t)sizeof(m),
		    "sendmsg: %s", strerror(errno));
	got = recv(s, &rep, sizeof(rep), 0);
	ITEST_CHECK(got == (ssize_t)sizeof(rep) && rep.seq == 7,
		    "ATTACH of a sealed memfd: no reply (%zd)", got);
	ITEST_CHECK(rep.status != SPINNIC_PTL_OK,
		    "ATTACH of a memfd sealed against writes accepted");
	close(s);
	close(mfd);
	printf("itest_region: ATTACH of a memfd sealed against writes: refused (status %d)\n",
	       rep.status);
}

/* ---- hugepages for the hugetlb cases ------------------------------------ */

static long hp_saved = -1;

static long
read_long(const char *path)
{
	long v = -1;
	FILE *f = fopen(path, "r");

	if (f != NULL) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static bool
write_long(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	bool ok;

	if (f == NULL)
		return false;
	ok = fprintf(f, "%ld\n", v) > 0;
	return fclose(f) == 0 && ok;
}

static void
hp_restore(void)
{
	if (hp_saved >= 0)
		(void)write_long(NR_HP, hp_saved);
	hp_saved = -1;
}

/* Free hugepages for the hugetlb cases: reserve some as root when short
 * (given back at exit). @return whether there are enough. */
static bool
hp_setup(void)
{
	long nfree = read_long(FREE_HP), nr = read_long(NR_HP);

	if (nfree >= HP_WANT)
		return true;
	if (geteuid() != 0 || nr < 0)
		return false;
	hp_saved = nr;
	atexit(hp_restore);
	if (!write_long(NR_HP, nr + HP_WANT - (nfree > 0 ? nfree : 0)))
		return false;
	return read_long(FREE_HP) >= HP_WANT;
}

int
main(void)
{
	char line[128];
	struct kid b, k;
	bool have_hp;
	long long refused;

	itest_init("itest_region", 170);
	kid_line_ms = 30000;
	have_hp = hp_setup();
	itest_spinnic_start(NULL);
	/* re-checked: spinnic's EAL may have taken some */
	have_hp = have_hp && read_long(FREE_HP) >= HP_WANT;
	if (!have_hp)
		printf("itest_region: fewer than %d free hugepages: the hugetlb cases are skipped\n",
		       HP_WANT);

	kid_start(&b, "bystander", 0, false, kid_bystander, NULL);
	kid_expect(&b, "ready", line, sizeof(line));
	bystander_round(&b, "before");

	attack(&b, true, have_hp);
	attack(&b, false, have_hp);
	if (have_hp) {
		kid_start(&k, "early-hole", 0, true, kid_early_hole, NULL);
		kid_expect(&k, "ok hugetlb=", line, sizeof(line));
		kid_end(&k);
		printf("itest_region: a hole punched before attach (%s): filled, put ok\n",
		       line + 3);
	}
	attach_sealed();
	bystander_round(&b, "at the end");
	kid_end(&b);

	itest_spinnic_finish();
	itest_expect_no_leaks();
	refused = itest_counter(0, "region_refused");
	ITEST_CHECK(refused == 1, "node 0: region_refused %lld, want 1",
		    refused);
	hp_restore();
	printf("itest_region: ok\n");
	return 0;
}
