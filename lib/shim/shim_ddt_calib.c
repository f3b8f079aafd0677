/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Layout-aware typed receives: calibration of the `aware` cost table.
 * Self-sends through the real NIC (every strategy on four vector layouts,
 * interleaved, lower quartiles), fitted to the per-message, per-byte and
 * per-block costs of struct shim_ddt_cost; a text cache file per machine
 * and spinnic setting, read back as hostile input (every field checked)
 * and written atomically.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shim_ddt.h"
#include "shim_ddt_calib.h"

static struct shim_calib_stats cst;
static pthread_mutex_t cst_lock = PTHREAD_MUTEX_INITIALIZER;

#define CST_INC(f) \
	do { \
		pthread_mutex_lock(&cst_lock); \
		cst.f++; \
		pthread_mutex_unlock(&cst_lock); \
	} while (0)

static const char *const err_names[SHIM_CALIB_E_COUNT] = {
	[SHIM_CALIB_OK] = "ok",
	[SHIM_CALIB_E_IO] = "unreadable, empty or too long",
	[SHIM_CALIB_E_FORMAT] = "malformed",
	[SHIM_CALIB_E_VERSION] = "another format version",
	[SHIM_CALIB_E_KEY] = "another machine or spinnic setting",
	[SHIM_CALIB_E_VALUE] = "a value out of range",
};

const char *
shim_calib_strerror(enum shim_calib_err why)
{
	return (unsigned)why < SHIM_CALIB_E_COUNT ? err_names[why] : "?";
}

void
shim_calib_reject(const char *path, enum shim_calib_err why)
{
	if ((unsigned)why >= SHIM_CALIB_E_COUNT)
		why = SHIM_CALIB_E_FORMAT;
	pthread_mutex_lock(&cst_lock);
	cst.rejected++;
	cst.reject[why]++;
	pthread_mutex_unlock(&cst_lock);
	SHIM_ERR("typed receives: calibration file %s ignored (%s)",
		 path != NULL ? path : "?", shim_calib_strerror(why));
}

void
shim_calib_stats_get(struct shim_calib_stats *s_p)
{
	pthread_mutex_lock(&cst_lock);
	*s_p = cst;
	pthread_mutex_unlock(&cst_lock);
}

/* ---- key and path -------------------------------------------------------- */

static uint64_t
fnv(const void *p, size_t n, uint64_t h)
{
	const uint8_t *b = p;

	while (n-- > 0)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

uint64_t
shim_calib_key(uint32_t payload, uint32_t nhpu, uint64_t nic_mem)
{
	uint32_t v[3] = { SHIM_CALIB_VERSION, SPINNIC_ABI_VERSION, payload };
	char host[256] = "";
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t h = 0xcbf29ce484222325ull;

	h = fnv(v, sizeof(v), h);
	h = fnv(&nhpu, sizeof(nhpu), h);
	h = fnv(&nic_mem, sizeof(nic_mem), h);
	h = fnv(&ncpu, sizeof(ncpu), h);
	gethostname(host, sizeof(host) - 1);
	return fnv(host, strlen(host), h);
}

int
shim_calib_path(uint64_t key, char *buf, size_t len)
{
	const char *f = getenv("SPINNIC_DDT_CALIB_FILE");
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (f != NULL && *f != '\0')
		n = snprintf(buf, len, "%s", f);
	else if (x != NULL && x[0] == '/')
		n = snprintf(buf, len, "%s/spinnic/ddt-calib-v%u-%016llx", x,
			     SHIM_CALIB_VERSION, (unsigned long long)key);
	else if (home != NULL && home[0] == '/')
		n = snprintf(buf, len,
			     "%s/.cache/spinnic/ddt-calib-v%u-%016llx", home,
			     SHIM_CALIB_VERSION, (unsigned long long)key);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* ---- the file ------------------------------------------------------------ */
/*
 * spinnic-ddt-calib 3
 * key 0123456789abcdef
 * payload 2048
 * nhpu 2
 * prep MSG_NS BLOCK_NS
 * unpack BYTE_NS BLOCK_NS
 * ms CALIB_MS
 * cost NAME VALID MSG BYTE BLOCK PKT OUT_BLOCK GEN_BLOCK (host .. rw-cp)
 * end
 */

/* Strategies with a line, in file order. */
static const enum spin_type_strategy file_strats[] = {
	SPIN_TYPE_HOST, SPIN_TYPE_IOVEC, SPIN_TYPE_SPECIALIZED,
	SPIN_TYPE_HPU_LOCAL, SPIN_TYPE_RO_CP, SPIN_TYPE_RW_CP,
};
#define NFILE_STRATS (sizeof(file_strats) / sizeof(file_strats[0]))

/* A cursor over the file's bytes: one line at a time. */
struct rd {
	const char *p, *end;
	char line[256];
};

/* The next line, without its '\n'. A line without '\n' (truncated file),
 * a NUL byte or a line over 255 bytes fails. */
static bool
rd_line(struct rd *r)
{
	const char *nl;
	size_t n;

	if (r->p >= r->end)
		return false;
	nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
	if (nl == NULL)
		return false;
	n = (size_t)(nl - r->p);
	if (n >= sizeof(r->line) || memchr(r->p, '\0', n) != NULL)
		return false;
	memcpy(r->line, r->p, n);
	r->line[n] = '\0';
	r->p = nl + 1;
	return true;
}

/* A finite value in [0, max], the whole token. */
static bool
num_ok(const char *tok, double max, double *v_p)
{
	char *e;
	double v;

	if (tok == NULL || *tok == '\0')
		return false;
	errno = 0;
	v = strtod(tok, &e);
	if (*e != '\0' || errno != 0 || !isfinite(v) || v < 0.0 || v > max)
		return false;
	*v_p = v;
	return true;
}

/* An unsigned integer token in [lo, hi]. */
static bool
uint_ok(const char *tok, unsigned long long lo, unsigned long long hi,
	int base, unsigned long long *v_p)
{
	unsigned long long v;
	char *e;

	if (tok == NULL || *tok == '\0' || *tok == '-' || *tok == '+')
		return false;
	errno = 0;
	v = strtoull(tok, &e, base);
	if (*e != '\0' || errno != 0 || v < lo || v > hi)
		return false;
	*v_p = v;
	return true;
}

/* Split line into at most max space-separated tokens.
 * @return the count, or max + 1 when there are more */
static int
split(char *line, char **tok, int max)
{
	char *save = NULL, *t;
	int n = 0;

	for (t = strtok_r(line, " ", &save); t != NULL;
	     t = strtok_r(NULL, " ", &save)) {
		if (n == max)
			return max + 1;
		tok[n++] = t;
	}
	return n;
}

enum shim_calib_err
shim_calib_parse(const char *buf, size_t len, uint64_t key,
		 struct shim_calib *c_p)
{
	struct rd r = { .p = buf, .end = buf + len };
	struct shim_calib c;
	unsigned long long u;
	char *tok[9];
	size_t i;
	double v;

	memset(&c, 0, sizeof(c));
	if (buf == NULL || len == 0 || len > SHIM_CALIB_FILE_MAX)
		return SHIM_CALIB_E_IO;
	if (!rd_line(&r) || split(r.line, tok, 2) != 2 ||
	    strcmp(tok[0], "spinnic-ddt-calib") != 0)
		return SHIM_CALIB_E_FORMAT;
	if (!uint_ok(tok[1], 0, UINT32_MAX, 10, &u) ||
	    u != SHIM_CALIB_VERSION)
		return SHIM_CALIB_E_VERSION;
	if (!rd_line(&r) || split(r.line, tok, 2) != 2 ||
	    strcmp(tok[0], "key") != 0 || strlen(tok[1]) != 16 ||
	    !uint_ok(tok[1], 0, UINT64_MAX, 16, &u))
		return SHIM_CALIB_E_FORMAT;
	if (u != key)
		return SHIM_CALIB_E_KEY;
	c.key = u;
	if (!rd_line(&r) || split(r.line, tok, 2) != 2 ||
	    strcmp(tok[0], "payload") != 0)
		return SHIM_CALIB_E_FORMAT;
	if (!uint_ok(tok[1], 1, 1u << 20, 10, &u))
		return SHIM_CALIB_E_VALUE;
	c.payload = (uint32_t)u;
	if (!rd_line(&r) || split(r.line, tok, 2) != 2 ||
	    strcmp(tok[0], "nhpu") != 0)
		return SHIM_CALIB_E_FORMAT;
	if (!uint_ok(tok[1], 1, 1024, 10, &u))
		return SHIM_CALIB_E_VALUE;
	c.costs.nhpu = (uint32_t)u;
	if (!rd_line(&r) || split(r.line, tok, 3) != 3 ||
	    strcmp(tok[0], "prep") != 0)
		return SHIM_CALIB_E_FORMAT;
	if (!num_ok(tok[1], SHIM_CALIB_MSG_MAX, &c.prep_msg_ns) ||
	    !num_ok(tok[2], SHIM_CALIB_UNIT_MAX, &c.prep_block_ns))
		return SHIM_CALIB_E_VALUE;
	if (!rd_line(&r) || split(r.line, tok, 3) != 3 ||
	    strcmp(tok[0], "unpack") != 0)
		return SHIM_CALIB_E_FORMAT;
	if (!num_ok(tok[1], SHIM_CALIB_UNIT_MAX, &c.costs.unpack_byte_ns) ||
	    !num_ok(tok[2], SHIM_CALIB_UNIT_MAX, &c.costs.unpack_block_ns))
		return SHIM_CALIB_E_VALUE;
	if (!rd_line(&r) || split(r.line, tok, 2) != 2 ||
	    strcmp(tok[0], "ms") != 0)
		return SHIM_CALIB_E_FORMAT;
	if (!num_ok(tok[1], 1e7, &c.calib_ms))
		return SHIM_CALIB_E_VALUE;
	for (i = 0; i < NFILE_STRATS; i++) {
		enum spin_type_strategy s = file_strats[i];
		struct shim_ddt_cost *k = &c.costs.s[s];

		if (!rd_line(&r) || split(r.line, tok, 9) != 9 ||
		    strcmp(tok[0], "cost") != 0 ||
		    strcmp(tok[1], spin_type_strategy_name(s)) != 0)
			return SHIM_CALIB_E_FORMAT;
		if (!uint_ok(tok[2], 0, 1, 10, &u) ||
		    !num_ok(tok[3], SHIM_CALIB_MSG_MAX, &k->msg_ns) ||
		    !num_ok(tok[4], SHIM_CALIB_UNIT_MAX, &k->byte_ns) ||
		    !num_ok(tok[5], SHIM_CALIB_UNIT_MAX, &k->block_ns) ||
		    !num_ok(tok[6], SHIM_CALIB_UNIT_MAX, &k->pkt_ns) ||
		    !num_ok(tok[7], SHIM_CALIB_UNIT_MAX, &k->out_block_ns) ||
		    !num_ok(tok[8], SHIM_CALIB_UNIT_MAX, &k->gen_block_ns))
			return SHIM_CALIB_E_VALUE;
		k->valid = u == 1;
	}
	/* a table without the host path cannot decide anything */
	if (!c.costs.s[SPIN_TYPE_HOST].valid)
		return SHIM_CALIB_E_VALUE;
	if (!rd_line(&r) || strcmp(r.line, "end") != 0 || r.p != r.end)
		return SHIM_CALIB_E_FORMAT;
	(void)v;
	*c_p = c;
	return SHIM_CALIB_OK;
}

int
shim_calib_format(const struct shim_calib *c, char *buf, size_t len)
{
	size_t off = 0, i;
	int n;

#define PUT(...) \
	do { \
		n = snprintf(buf + off, len - off, __VA_ARGS__); \
		if (n < 0 || (size_t)n >= len - off) \
			return -ENOSPC; \
		off += (size_t)n; \
	} while (0)
	if (len == 0)
		return -ENOSPC;
	/* %.17g round-trips every double; a value the parser would refuse
	 * is refused here */
	PUT("spinnic-ddt-calib %u\nkey %016llx\npayload %u\nnhpu %u\n",
	    SHIM_CALIB_VERSION, (unsigned long long)c->key, c->payload,
	    c->costs.nhpu);
	PUT("prep %.17g %.17g\nunpack %.17g %.17g\nms %.17g\n",
	    c->prep_msg_ns, c->prep_block_ns, c->costs.unpack_byte_ns,
	    c->costs.unpack_block_ns, c->calib_ms);
	for (i = 0; i < NFILE_STRATS; i++) {
		const struct shim_ddt_cost *k = &c->costs.s[file_strats[i]];

		PUT("cost %s %d %.17g %.17g %.17g %.17g %.17g %.17g\n",
		    spin_type_strategy_name(file_strats[i]), k->valid ? 1 : 0,
		    k->msg_ns, k->byte_ns, k->block_ns, k->pkt_ns,
		    k->out_block_ns, k->gen_block_ns);
	}
	PUT("end\n");
#undef PUT
	{
		struct shim_calib back;

		if (shim_calib_parse(buf, off, c->key, &back) != SHIM_CALIB_OK)
			return -EINVAL;
	}
	return (int)off;
}

int
shim_calib_load(const char *path, uint64_t key, struct shim_calib *c_p)
{
	char buf[SHIM_CALIB_FILE_MAX + 1];
	enum shim_calib_err why;
	size_t len = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return -ENOENT;
		shim_calib_reject(path, SHIM_CALIB_E_IO);
		return -EINVAL;
	}
	/* one byte more than the cap: an over-long file is seen */
	while (len < sizeof(buf)) {
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	why = shim_calib_parse(buf, len, key, c_p);
	if (why != SHIM_CALIB_OK) {
		shim_calib_reject(path, why);
		return -EINVAL;
	}
	CST_INC(loaded);
	return 0;
}

/* mkdir -p of the folder of path. */
static int
mkdirs(const char *path)
{
	char d[PATH_MAX];
	char *p;

	if (snprintf(d, sizeof(d), "%s", path) >= (int)sizeof(d))
		return -ENAMETOOLONG;
	p = strrchr(d, '/');
	if (p == NULL || p == d)
		return 0;
	*p = '\0';
	for (p = d + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(d, 0700) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(d, 0700) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int
shim_calib_save(const char *path, const struct shim_calib *c)
{
	char buf[SHIM_CALIB_FILE_MAX], tmp[PATH_MAX];
	int n, fd, rc;
	size_t off = 0;
	ssize_t w;

	n = shim_calib_format(c, buf, sizeof(buf));
	if (n < 0)
		goto fail_n;
	rc = mkdirs(path);
	if (rc != 0) {
		n = rc;
		goto fail_n;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >=
	    (int)sizeof(tmp)) {
		n = -ENAMETOOLONG;
		goto fail_n;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0) {
		n = -errno;
		goto fail_n;
	}
	while (off < (size_t)n) {
		w = write(fd, buf + off, (size_t)n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = w < 0 ? -errno : -EIO;
			goto fail_tmp;
		}
		off += (size_t)w;
	}
	if (fsync(fd) != 0) {
		rc = -errno;
		goto fail_tmp;
	}
	if (close(fd) != 0) {
		fd = -1;
		rc = -errno;
		goto fail_tmp;
	}
	fd = -1;
	/* readers see the old file or the whole new one */
	if (rename(tmp, path) != 0) {
		rc = -errno;
		goto fail_tmp;
	}
	CST_INC(saved);
	return 0;
fail_tmp:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	n = rc;
fail_n:
	CST_INC(save_failed);
	SHIM_ERR("typed receives: calibration not saved to %s: %s", path,
		 strerror(-n));
	return n;
}

/* ---- measurement ---------------------------------------------------------- */

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int
dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The measured layouts: blocks of blk bytes, nblocks of them. A: one
 * packet, few blocks (fixed cost); B and C: same bytes, few large or many
 * small blocks (per byte, per block); D: C outside the region; E: C's
 * bytes and blocks as a general layout (irregular block lengths: the
 * dataloop strategies' and the host unpack's extra per block, which a
 * vector does not show; fourth slice, after Fig. 13's small-block general
 * types were predicted from vectors). */
enum { L_A, L_B, L_C, L_D, L_E, L_COUNT };
static const struct {
	int64_t blk, nblocks;
	bool in_region, general;
} layouts[L_COUNT] = {
	[L_A] = { 256, 8, true, false },
	[L_B] = { 4096, 16, true, false },
	[L_C] = { 64, 1024, true, false },
	[L_D] = { 64, 1024, false, false },
	[L_E] = { 64, 1024, true, true },
};
/* Timed messages per point; the point is their lower quartile: on a CPU
 * shared with spinnic's lcore and other processes, interference only adds
 * time, and the median of a few samples moved the fitted per-block costs
 * by 10x between runs under load (differences of medians). */
#define CALIB_REPS 8
#define CALIB_MIN_REPS 3

/* Strategies measured, host first (the table is useless without it). */
static const enum spin_type_strategy meas_strats[] = {
	SPIN_TYPE_HOST, SPIN_TYPE_SPECIALIZED, SPIN_TYPE_IOVEC,
	SPIN_TYPE_HPU_LOCAL, SPIN_TYPE_RO_CP, SPIN_TYPE_RW_CP,
};
#define NMEAS (sizeof(meas_strats) / sizeof(meas_strats[0]))

static double
clamp0(double v)
{
	return isfinite(v) && v > 0.0 ? v : 0.0;
}

/* Fit strategy s from its points t[L_A..L_D] (negative: not measured). */
static void
fit_one(enum spin_type_strategy s, const double *t, uint32_t payload,
	uint32_t nhpu, struct shim_ddt_cost *k)
{
	double par[L_COUNT], sz[L_COUNT], nb[L_COUNT], den;
	bool nic = s != SPIN_TYPE_HOST;
	int l;

	memset(k, 0, sizeof(*k));
	for (l = 0; l < L_COUNT; l++) {
		int64_t pk;

		/* D and E may be missing (specialized cannot express E) */
		if (t[l] < 0.0 && l != L_D && l != L_E)
			return;
		sz[l] = (double)(layouts[l].blk * layouts[l].nblocks);
		nb[l] = (double)layouts[l].nblocks;
		pk = ((int64_t)sz[l] + payload - 1) / payload;
		par[l] = nic ? (double)(nhpu < pk ? nhpu : pk) : 1.0;
		if (par[l] < 1.0)
			par[l] = 1.0;
	}
	/* B and C: same bytes and packets, so the difference is blocks */
	k->block_ns = clamp0((t[L_C] - t[L_B]) * par[L_B] /
			     (nb[L_C] - nb[L_B]));
	/* A against B: the bytes (A is one packet, no parallelism) */
	den = sz[L_B] / par[L_B] - sz[L_A] / par[L_A];
	k->byte_ns = den > 0.0 ?
		clamp0((t[L_B] - t[L_A] + k->block_ns *
			(nb[L_A] / par[L_A] - nb[L_B] / par[L_B])) / den) : 0.0;
	k->msg_ns = clamp0(t[L_A] - (k->byte_ns * sz[L_A] +
				     k->block_ns * nb[L_A]) / par[L_A]);
	if (nic && t[L_D] >= 0.0)
		k->out_block_ns = clamp0((t[L_D] - t[L_C]) * par[L_C] /
					 nb[L_C]);
	/* E against C: same bytes, blocks and packets */
	if (t[L_E] >= 0.0)
		k->gen_block_ns = clamp0((t[L_E] - t[L_C]) * par[L_C] /
					 nb[L_C]);
	k->valid = true;
	if (k->msg_ns > SHIM_CALIB_MSG_MAX || k->byte_ns > SHIM_CALIB_UNIT_MAX ||
	    k->block_ns > SHIM_CALIB_UNIT_MAX ||
	    k->out_block_ns > SHIM_CALIB_UNIT_MAX ||
	    k->gen_block_ns > SHIM_CALIB_UNIT_MAX)
		memset(k, 0, sizeof(*k));
}

int
shim_calib_run(shim_calib_measure_fn fn, void *arg, uint32_t payload,
	       uint32_t nhpu, struct shim_calib *c_p)
{
	double med[NMEAS][L_COUNT], smp[NMEAS][CALIB_REPS];
	uint64_t t0 = now_ns(), budget = SHIM_CALIB_BUDGET_MS * 1000000ull;
	size_t i;
	int l, r;

	memset(c_p, 0, sizeof(*c_p));
	if (payload == 0)
		payload = 1;
	if (nhpu == 0)
		nhpu = 1;
	c_p->payload = payload;
	c_p->costs.nhpu = nhpu;
	for (i = 0; i < NMEAS; i++)
		for (l = 0; l < L_COUNT; l++)
			med[i][l] = -1.0;
	for (l = 0; l < L_COUNT; l++) {
		/* each layout has its share of the budget; at least
		 * CALIB_MIN_REPS rounds are taken whatever it costs (a slow
		 * build, a loaded machine), fewer points would not fit */
		uint64_t until = t0 + budget * (uint64_t)(l + 1) / L_COUNT;
		bool ok[NMEAS];
		int n[NMEAS];

		/* one untimed message per strategy first: the object is
		 * uploaded, caches are warm */
		for (i = 0; i < NMEAS; i++) {
			double x;

			n[i] = 0;
			ok[i] = fn(arg, meas_strats[i], layouts[l].blk,
				   layouts[l].nblocks, layouts[l].in_region,
				   layouts[l].general, &x) == 0;
		}
		/* interleaved: a burst of interference hits every strategy
		 * of a layout alike */
		for (r = 0; r < CALIB_REPS; r++) {
			if (r >= CALIB_MIN_REPS && now_ns() > until)
				break;
			for (i = 0; i < NMEAS; i++) {
				if (!ok[i])
					continue;
				ok[i] = fn(arg, meas_strats[i],
					   layouts[l].blk, layouts[l].nblocks,
					   layouts[l].in_region,
					   layouts[l].general,
					   &smp[i][r]) == 0;
				n[i]++;
			}
		}
		for (i = 0; i < NMEAS; i++)
			if (ok[i] && n[i] >= CALIB_MIN_REPS) {
				qsort(smp[i], (size_t)n[i], sizeof(double),
				      dbl_cmp);
				med[i][l] = smp[i][n[i] / 4];
			}
	}
	for (i = 0; i < NMEAS; i++)
		fit_one(meas_strats[i], med[i], payload, nhpu,
			&c_p->costs.s[meas_strats[i]]);
	/* the host unpacks itself: a buffer outside the region costs it
	 * nothing more */
	c_p->costs.s[SPIN_TYPE_HOST].out_block_ns = 0.0;
	c_p->calib_ms = (double)(now_ns() - t0) / 1e6;
	if (!c_p->costs.s[SPIN_TYPE_HOST].valid) {
		CST_INC(measure_failed);
		return -EIO;
	}
	CST_INC(measured);
	return 0;
}

/* Time an unpack (or a flattening) of a vector of nblocks blocks of blk
 * bytes (lower quartile of CALIB_REPS). */
static int
time_unpack(int64_t blk, int64_t nblocks, bool flatten, double *ns_p)
{
	char expr[96];
	struct ddt_type *t;
	struct ddt_iov *iov = NULL;
	uint8_t *src, *dst;
	double smp[CALIB_REPS];
	int64_t sz = blk * nblocks;
	uint64_t a;
	int r, rc = 0;

	snprintf(expr, sizeof(expr), "vector(%lld,%lld,%lld)[uint8]",
		 (long long)nblocks, (long long)blk, (long long)(2 * blk));
	t = ddt_parse(expr, NULL);
	if (t == NULL || ddt_commit(t) != 0) {
		ddt_free(t);
		return -ENOMEM;
	}
	src = malloc((size_t)sz);
	dst = malloc((size_t)(2 * sz));
	if (flatten)
		iov = malloc((size_t)nblocks * sizeof(*iov));
	if (src == NULL || dst == NULL || (flatten && iov == NULL)) {
		rc = -ENOMEM;
		goto out;
	}
	memset(src, 1, (size_t)sz);
	for (r = -1; r < CALIB_REPS; r++) {
		a = now_ns();
		if (flatten)
			ddt_flatten(t, 1, iov, nblocks);
		else
			ddt_unpack(t, 1, src, dst);
		if (r >= 0)
			smp[r] = (double)(now_ns() - a);
	}
	qsort(smp, CALIB_REPS, sizeof(double), dbl_cmp);
	*ns_p = smp[CALIB_REPS / 4];
out:
	free(iov);
	free(src);
	free(dst);
	ddt_free(t);
	return rc;
}

int
shim_calib_unpack(double *byte_ns_p, double *block_ns_p)
{
	double big, small;
	int rc;

	/* 64 KiB in 16 blocks, then in 1024 */
	rc = time_unpack(4096, 16, false, &big);
	if (rc == 0)
		rc = time_unpack(64, 1024, false, &small);
	if (rc != 0)
		return rc;
	*block_ns_p = clamp0((small - big) / (1024.0 - 16.0));
	*byte_ns_p = clamp0((big - *block_ns_p * 16.0) / 65536.0);
	return 0;
}

/* Preparation cost of the iovec list (the largest per-block part of a
 * preparation besides the upload): flattening per block. */
static double
prep_block_ns(void)
{
	double a = 0.0, b = 0.0;

	if (time_unpack(64, 16, true, &a) != 0 ||
	    time_unpack(64, 4096, true, &b) != 0)
		return 0.0;
	return clamp0((b - a) / (4096.0 - 16.0));
}

/* ---- the real NIC ---------------------------------------------------------- */

#define CALIB_CAP (128u << 10)
/* a message not received in this time fails its point */
#define CALIB_EV_TIMEOUT_NS 2000000000ull

/* A PT for the self-sends from the top of the NI's table: an application
 * allocating fixed low indices while the calibration runs does not find
 * one taken (PTL_PT_ANY would take the lowest free). */
static int
calib_pt_alloc(struct shim_calib_nic *n)
{
	const struct shim_ni *sni = shim_to_ni(n->ni, NULL);
	ptl_pt_index_t top, i;
	int rc = PTL_PT_FULL;

	if (sni == NULL)
		return PTL_ARG_INVALID;
	top = (ptl_pt_index_t)sni->limits.max_pt_index;
	for (i = 0; i < 16 && i <= top; i++) {
		rc = PtlPTAlloc(n->ni, 0, n->eq, top - i, &n->pt);
		if (rc == PTL_OK)
			return rc;
		n->pt = PTL_PT_ANY;
		if (rc != PTL_PT_IN_USE)
			break;
	}
	return rc;
}

int
shim_calib_nic_open(ptl_handle_ni_t ni, struct shim_calib_nic *n)
{
	ptl_md_t md;
	int rc;

	memset(n, 0, sizeof(*n));
	n->ni = ni;
	n->cap = CALIB_CAP;
	n->eq = PTL_EQ_NONE;
	n->md = PTL_INVALID_HANDLE;
	n->pt = PTL_PT_ANY;
	n->src = spin_host_alloc(n->cap);
	n->dst = spin_host_alloc(n->cap);
	n->dst_out = malloc(n->cap);
	if (n->src == NULL || n->dst == NULL || n->dst_out == NULL) {
		rc = PTL_NO_SPACE;
		goto fail;
	}
	memset(n->src, 0x5a, n->cap);
	rc = PtlGetId(ni, &n->self);
	if (rc == PTL_OK)
		rc = PtlEQAlloc(ni, 64, &n->eq);
	if (rc == PTL_OK)
		rc = calib_pt_alloc(n);
	if (rc != PTL_OK)
		goto fail;
	memset(&md, 0, sizeof(md));
	md.start = n->src;
	md.length = n->cap;
	md.eq_handle = PTL_EQ_NONE;
	md.ct_handle = PTL_CT_NONE;
	rc = PtlMDBind(ni, &md, &n->md);
	if (rc != PTL_OK)
		goto fail;
	return 0;
fail:
	shim_calib_nic_close(n);
	return -EIO;
}

static void
nic_layout_drop(struct shim_calib_nic *n)
{
	unsigned i;

	for (i = 0; i < SPIN_TYPE_COUNT; i++) {
		if (n->off[i] != NULL) {
			spin_type_offload_free(n->off[i]);
			n->off[i] = NULL;
		}
		n->fresh[i] = false;
	}
	ddt_free(n->t);
	n->t = NULL;
}

void
shim_calib_nic_close(struct shim_calib_nic *n)
{
	nic_layout_drop(n);
	if (n->md != PTL_INVALID_HANDLE)
		PtlMDRelease(n->md);
	if (n->pt != PTL_PT_ANY)
		PtlPTFree(n->ni, n->pt);
	if (n->eq != PTL_EQ_NONE)
		PtlEQFree(n->eq);
	if (n->src != NULL)
		spin_host_free(n->src);
	if (n->dst != NULL)
		spin_host_free(n->dst);
	free(n->dst_out);
	n->src = n->dst = NULL;
	n->dst_out = NULL;
}

/* Layout E: nblocks blocks of blk - 8 and blk + 8 bytes in turn (the mean
 * is blk), each followed by a gap of blk: general, not a vector or an
 * indexed-block. */
static struct ddt_type *
calib_general(int64_t blk, int64_t nblocks)
{
	int64_t lens[4096], displs[4096], off = 0, i;

	for (i = 0; i < nblocks; i++) {
		lens[i] = i % 2 == 0 ? blk - 8 : blk + 8;
		displs[i] = off;
		off += lens[i] + blk;
	}
	return ddt_hindexed(nblocks, lens, displs, ddt_base(DDT_BYTE));
}

int
shim_calib_measure_nic(void *arg, enum spin_type_strategy s, int64_t blk,
		       int64_t nblocks, bool in_region, bool general,
		       double *ns_p)
{
	struct shim_calib_nic *n = arg;
	struct spin_typed_recv *r;
	ptl_event_t ev;
	ptl_me_t me;
	uint64_t a, b, p, size = (uint64_t)(blk * nblocks);
	char expr[96];
	int rc;

	if ((unsigned)s >= SPIN_TYPE_COUNT || 2 * size > n->cap ||
	    (general && (blk < 16 || nblocks < 2 || nblocks > 4096)))
		return -EINVAL;
	if (n->t == NULL || n->blk != blk || n->nblocks != nblocks ||
	    n->general != general) {
		nic_layout_drop(n);
		if (general) {
			n->t = calib_general(blk, nblocks);
		} else {
			snprintf(expr, sizeof(expr),
				 "vector(%lld,%lld,%lld)[uint8]",
				 (long long)nblocks, (long long)blk,
				 (long long)(2 * blk));
			n->t = ddt_parse(expr, NULL);
		}
		if (n->t == NULL || ddt_commit(n->t) != 0)
			return -ENOMEM;
		n->blk = blk;
		n->nblocks = nblocks;
		n->general = general;
	}
	a = now_ns();
	if (n->off[s] == NULL &&
	    spin_type_offload(n->ni, n->t, 1, s, &n->off[s]) != PTL_OK) {
		n->off[s] = NULL;
		return -EIO;
	}
	memset(&me, 0, sizeof(me));
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = ++n->match;
	/* a receive is timed from its post: the post (an ME append, one
	 * control round trip) is part of every receive's fixed cost, as the
	 * refinement's samples and the benchmarks time it; without it the
	 * table missed ~10 us of a real receive (third slice) */
	p = now_ns();
	if (spin_me_append_typed(n->ni, n->pt, &me, n->off[s],
				 in_region ? n->dst : n->dst_out, NULL,
				 &r) != PTL_OK)
		return -EIO;
	b = now_ns();
	/* a first post of a NIC object uploads it: its preparation */
	if (s != SPIN_TYPE_HOST && n->fresh[s] == false &&
	    (n->prep_min_ns == 0.0 || (double)(b - a) < n->prep_min_ns))
		n->prep_min_ns = (double)(b - a);
	n->fresh[s] = true;
	a = now_ns();
	rc = PtlPut(n->md, 0, size, PTL_NO_ACK_REQ, n->self, n->pt,
		    me.match_bits, 0, NULL, 0);
	if (rc != PTL_OK) {
		spin_typed_recv_cancel(r);
		return -EIO;
	}
	/* busy-polled: a futex wake-up would add tens of µs of noise */
	for (;;) {
		rc = PtlEQGet(n->eq, &ev);
		if (rc == PTL_EQ_EMPTY) {
			if (now_ns() - a > CALIB_EV_TIMEOUT_NS) {
				spin_typed_recv_cancel(r);
				return -ETIMEDOUT;
			}
			continue;
		}
		if (rc != PTL_OK && rc != PTL_EQ_DROPPED)
			return -EIO;
		if (rc == PTL_OK && ev.type == PTL_EVENT_PUT &&
		    ev.user_ptr == r)
			break;
	}
	rc = spin_typed_recv_complete(r, &ev, NULL);
	b = now_ns();
	if (rc != PTL_OK || ev.ni_fail_type != PTL_NI_OK)
		return -EIO;
	*ns_p = (double)(b - p);
	return 0;
}

int
shim_calib_measure_all(ptl_handle_ni_t ni, uint32_t payload, uint32_t nhpu,
		       struct shim_calib *c_p)
{
	struct shim_calib_nic n;
	int rc;

	if (shim_calib_nic_open(ni, &n) != 0) {
		CST_INC(measure_failed);
		return -EIO;
	}
	rc = shim_calib_run(shim_calib_measure_nic, &n, payload, nhpu, c_p);
	shim_calib_nic_close(&n);
	if (rc != 0)
		return rc;
	if (shim_calib_unpack(&c_p->costs.unpack_byte_ns,
			      &c_p->costs.unpack_block_ns) != 0)
		c_p->costs.unpack_byte_ns = c_p->costs.unpack_block_ns = 0.0;
	c_p->prep_block_ns = prep_block_ns();
	c_p->prep_msg_ns = n.prep_min_ns;
	return 0;
}
