/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench unpack (paper 000 Fig. 8), preloaded mode (DESIGN §10): a
 * message of one type (default: 4 MiB of vector blocks, stride twice the
 * block, blocks 4 B .. 16 KiB) received by every strategy of DESIGN §7:
 *
 *  host-ddt, host-mpi  contiguous receive (the packets' payloads copied in
 *                      order into one buffer, the non-processing path),
 *                      then ddt_unpack / MPI_Unpack on the host; both timed
 *  specialized, hpu-local, ro-cp, rw-cp, iovec
 *                      the packets through the handler family that
 *                      implements the strategy, on the preloaded NIC
 *                      (bench_nic.c), timed from the first packet to the
 *                      last byte placed: ddt_vector or ddt_iblock
 *                      (specialized, by layout class), ddt_general
 *                      (hpu-local, ro-cp, rw-cp with the scheduling its
 *                      arguments ask for; Δr from --interval or paper
 *                      000's model), ddt_iovec (iovec: the flattened
 *                      blocks in a NIC memory blob), arguments from
 *                      spin_ddt_args.h (ddt_general's with the type's
 *                      compiled form unless --prog 0)
 *  floor               the layout's copy floor: the packets' payloads
 *                      copied into the window by a bare loop over a
 *                      precomputed piece list (bench_floor.h)
 *
 * A NIC strategy whose family is not in handlers/ (looked up by name at
 * run time) or cannot express the type is a row marked n/a, never
 * replaced by another path. Every row carries the streaming copy of the
 * same bytes measured in the same run.
 *
 * Plugging in a strategy once its family is in handlers/: give its entry
 * of strats[] a setup function that builds the family's argument block
 * (spin_handler_args.h; NIC memory blobs for a serialized type or
 * checkpoints through bench_nic_blob()) and installs it with
 * bench_nic_ctx(), as setup_vector() does for ddt_vector.
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddt.h>
#include <spin_ddt_args.h>
#include <spin_handler_args.h>

#include "bench.h"
#include "bench_floor.h"
#include "bench_nic.h"
#ifdef SPINNIC_HAVE_MPI
#include "ddt_mpi.h"
#endif

#define UNPACK_BYTES_DEFAULT (4ll << 20)

/* ---- the case: one type, its buffers, the reference ---------------------- */

struct ucase {
	char label[64];
	int64_t block_bytes;
	struct ddt_type *t;
	int64_t count;
	int64_t msg;          /* packed bytes */
	int64_t lo, span;     /* window = [origin + lo, origin + lo + span) */
	char *packed;         /* the message */
	char *contig;         /* host strategies: contiguous receive buffer */
	char *win;            /* the host buffer every strategy writes */
	char *ref;            /* ddt_unpack of packed into a 0xa5 span */
	void *mtype;          /* MPI_Datatype * or NULL */
	double limit_gbit_s;  /* the copy limit of this case */
};


static char *
origin(char *span_buf, const struct ucase *c)
{
	return (char *)((uintptr_t)span_buf - (uintptr_t)c->lo);
}

/* ---- strategies ------------------------------------------------------------- */

struct strat;

/* NIC strategy set-up: install a context of family @p fam (present in
 * handlers/) for the case's type; *interval_p: its checkpoint interval
 * Δr in bytes, if it has one.
 * @return 0; -ENOTSUP the strategy cannot express the type (why says
 *   so); another negative errno on failure (logged) */
typedef int (*strat_setup_fn)(const struct strat *s, const char *fam,
			      struct bench_nic *n, const struct ucase *c,
			      uint32_t *ctx_p, int64_t *interval_p,
			      char *why, size_t whylen);

enum strat_id {
	S_HOST_DDT, S_HOST_MPI, S_SPECIALIZED, S_HPU_LOCAL, S_RO_CP,
	S_RW_CP, S_IOVEC, S_FLOOR, S_COUNT,
};

/* Options (unpack_opt). */
static struct {
	int64_t block_min, block_max;
	uint32_t payload;
	unsigned hpus;
	unsigned strat_mask;
	int64_t interval;     /* Δr, 0: the model */
	int prog;             /* SPIN_DDT_F_PROG in ddt_general's args */
} cfg = { 4, 16384, 2048, 1, (1u << S_COUNT) - 1, 0, 1 };

struct strat {
	const char *name;     /* DESIGN §9 strategy name */
	/* handler families that implement it, by layout class: [0] vector
	 * and contig, [1] indexed-block, [2] general (NULL: none); each
	 * "name|name...": the first one handlers/ has is used */
	const char *family[3];
	strat_setup_fn setup; /* NULL: host strategy */
};

static int setup_special(const struct strat *s, const char *fam,
			 struct bench_nic *n, const struct ucase *c,
			 uint32_t *ctx_p, int64_t *interval_p, char *why,
			 size_t whylen);
static int setup_general(const struct strat *s, const char *fam,
			 struct bench_nic *n, const struct ucase *c,
			 uint32_t *ctx_p, int64_t *interval_p, char *why,
			 size_t whylen);
static int setup_iovec(const struct strat *s, const char *fam,
		       struct bench_nic *n, const struct ucase *c,
		       uint32_t *ctx_p, int64_t *interval_p, char *why,
		       size_t whylen);

#define FAM_GENERAL "ddt_general"
#define FAM_IOVEC "ddt_iovec"

static const struct strat strats[S_COUNT] = {
	[S_HOST_DDT] = { "host-ddt", { NULL, NULL, NULL }, NULL },
	[S_HOST_MPI] = { "host-mpi", { NULL, NULL, NULL }, NULL },
	[S_SPECIALIZED] = { "specialized",
			    { "ddt_vector", "ddt_iblock", NULL },
			    setup_special },
	[S_HPU_LOCAL] = { "hpu-local",
			  { FAM_GENERAL, FAM_GENERAL, FAM_GENERAL },
			  setup_general },
	[S_RO_CP] = { "ro-cp", { FAM_GENERAL, FAM_GENERAL, FAM_GENERAL },
		      setup_general },
	[S_RW_CP] = { "rw-cp", { FAM_GENERAL, FAM_GENERAL, FAM_GENERAL },
		      setup_general },
	[S_IOVEC] = { "iovec", { FAM_IOVEC, FAM_IOVEC, FAM_IOVEC },
		      setup_iovec },
	[S_FLOOR] = { "floor", { NULL, NULL, NULL }, NULL },
};

/* Index into strat.family of a layout class. */
static int
class_slot(const struct ucase *c, struct ddt_class_info *ci)
{
	if (ddt_classify(c->t, c->count, ci) < 0)
		return 2;
	switch (ci->cls) {
	case DDT_CLASS_CONTIG:
	case DDT_CLASS_VECTOR:
		return 0;
	case DDT_CLASS_INDEXED_BLOCK:
		return 1;
	default:
		return 2;
	}
}

/* specialized: "ddt_vector" (vector and contig classes) or "ddt_iblock"
 * (indexed-block), with the builders of spin_ddt_args.h. */
static int
setup_special(const struct strat *s, const char *fam, struct bench_nic *n,
	      const struct ucase *c, uint32_t *ctx_p, int64_t *interval_p,
	      char *why, size_t whylen)
{
	struct spin_ctx_conf cc = { .family = fam };
	struct spin_vec_args va;
	ssize_t len;
	void *buf;
	int rc;

	(void)s;
	(void)interval_p;
	if (strcmp(fam, "ddt_vector") == 0) {
		rc = spin_ddt_vec_args(c->t, c->count, -c->lo, &va);
		if (rc < 0) {
			snprintf(why, whylen, "n/a: ddt_vector args: %s",
				 ddt_strerror(rc));
			return -ENOTSUP;
		}
		cc.args = &va;
		cc.args_len = sizeof(va);
		return bench_nic_ctx(n, &cc, ctx_p);
	}
	len = spin_ddt_iblock_args(c->t, c->count, -c->lo, NULL, 0);
	if (len < 0 || len > UINT32_MAX) {
		snprintf(why, whylen, "n/a: ddt_iblock args: %s",
			 ddt_strerror(len < 0 ? (int)len : -E2BIG));
		return -ENOTSUP;
	}
	buf = malloc((size_t)len);
	if (buf == NULL)
		return -ENOMEM;
	if (spin_ddt_iblock_args(c->t, c->count, -c->lo, buf, (size_t)len) !=
	    len) {
		free(buf);
		bench_err("ddt_iblock args changed size");
		return -EIO;
	}
	cc.args = buf;
	cc.args_len = (uint32_t)len;
	rc = bench_nic_ctx(n, &cc, ctx_p);
	free(buf);
	return rc;
}

/*
 * Δr of RO-CP and RW-CP: --interval, else paper 000's model
 * (ddt_ckpt_select_interval, ε = 0.2, 16 MiB of NIC memory for
 * checkpoints) with the packets arriving at the copy limit measured for
 * this case and handlers that keep up with them (T_PH = T_pkt).
 */
static int64_t
ckpt_interval(const struct ucase *c, size_t ckpt_size)
{
	struct ddt_ckpt_model m;
	double t_pkt;

	if (cfg.interval > 0)
		return cfg.interval;
	t_pkt = c->limit_gbit_s > 0 ?
		(double)cfg.payload * 8 / (c->limit_gbit_s * 1e9) : 1e-7;
	memset(&m, 0, sizeof(m));
	m.epsilon = 0.2;
	m.nic_mem = 16u << 20;
	m.hpus = cfg.hpus;
	m.pkt_payload = cfg.payload;
	m.t_pkt = t_pkt;
	m.t_ph = t_pkt;
	m.ckpt_size = ckpt_size;
	m.msg_size = c->msg;
	return ddt_ckpt_select_interval(&m);
}

/* hpu-local, ro-cp, rw-cp: "ddt_general" with spin_ddt_general_args() and
 * the scheduling it asks for. */
static int
setup_general(const struct strat *s, const char *fam, struct bench_nic *n,
	      const struct ucase *c, uint32_t *ctx_p, int64_t *interval_p,
	      char *why, size_t whylen)
{
	struct spin_ctx_conf cc = { .family = fam };
	struct spin_ddt_plan plan;
	struct spin_ddt_sched sc;
	ssize_t len;
	void *buf;
	int rc;

	memset(&plan, 0, sizeof(plan));
	plan.strategy = s == &strats[S_HPU_LOCAL] ? SPIN_DDT_HPU_LOCAL :
		s == &strats[S_RO_CP] ? SPIN_DDT_RO_CP : SPIN_DDT_RW_CP;
	plan.nhpu = cfg.hpus;
	plan.pkt_payload = cfg.payload;
	plan.origin = -c->lo;
	plan.stats_off = SPIN_DDT_STATS_NONE;
	plan.flags = cfg.prog ? SPIN_DDT_F_PROG : 0;
	if (plan.strategy != SPIN_DDT_HPU_LOCAL) {
		struct ddt_ckpt_set *cs = ddt_ckpt_create(c->t, c->count,
							  c->msg > 0 ? c->msg :
							  1);

		if (cs == NULL) {
			bench_err("ddt_ckpt_create: %s", ddt_strerror(errno));
			return -ENOMEM;
		}
		plan.interval = ckpt_interval(c, ddt_ckpt_size(cs));
		ddt_ckpt_free(cs);
		if (plan.interval <= 0) {
			snprintf(why, whylen, "n/a: no checkpoint interval "
				 "fits: %s", ddt_strerror((int)plan.interval));
			return -ENOTSUP;
		}
	}
	len = spin_ddt_general_args(c->t, c->count, &plan, NULL, 0, &sc);
	if (len < 0 || len > UINT32_MAX) {
		snprintf(why, whylen, "n/a: ddt_general args: %s",
			 ddt_strerror(len < 0 ? (int)len : -E2BIG));
		return -ENOTSUP;
	}
	buf = aligned_alloc(8, ((size_t)len + 7) & ~(size_t)7);
	if (buf == NULL)
		return -ENOMEM;
	if (spin_ddt_general_args(c->t, c->count, &plan, buf, (size_t)len,
				  &sc) != len) {
		free(buf);
		bench_err("ddt_general args changed size");
		return -EIO;
	}
	cc.args = buf;
	cc.args_len = (uint32_t)len;
	cc.policy = sc.blocked_rr ? SPINNIC_SCHED_BLOCKED_RR :
		SPINNIC_SCHED_DEFAULT;
	cc.delta_p = sc.delta_p;
	cc.nvhpu = sc.nvhpu;
	rc = bench_nic_ctx(n, &cc, ctx_p);
	free(buf);
	/* RW-CP: Δr rounded up to whole packets, Δp = Δr / k */
	if (plan.strategy == SPIN_DDT_RW_CP)
		*interval_p = (int64_t)sc.delta_p * cfg.payload;
	else if (plan.strategy == SPIN_DDT_RO_CP)
		*interval_p = plan.interval;
	return rc;
}

/* iovec: "ddt_iovec", the flattened blocks (spin_ddt_iovec_args()) in a
 * NIC memory blob; a list larger than NIC memory is a row marked n/a. */
static int
setup_iovec(const struct strat *s, const char *fam, struct bench_nic *n,
	    const struct ucase *c, uint32_t *ctx_p, int64_t *interval_p,
	    char *why, size_t whylen)
{
	struct spin_ctx_conf cc = { .family = fam };
	struct spin_iovec_args a;
	struct spin_iovec_ent *list;
	uint32_t blob = 0;
	ssize_t len;
	int rc;

	(void)s;
	(void)interval_p;
	len = spin_ddt_iovec_args(c->t, c->count, -c->lo, 0, &a, NULL, 0);
	if (len < 0) {
		snprintf(why, whylen, "n/a: ddt_iovec args: %s",
			 ddt_strerror((int)len));
		return -ENOTSUP;
	}
	if (len > 0) {
		list = malloc((size_t)len);
		if (list == NULL)
			return -ENOMEM;
		if (spin_ddt_iovec_args(c->t, c->count, -c->lo, 0, &a, list,
					(size_t)len) != len) {
			free(list);
			bench_err("ddt_iovec list changed size");
			return -EIO;
		}
		rc = bench_nic_blob(n, list, (uint64_t)len, &blob);
		free(list);
		if (rc == -ENOSPC || rc == -ENOMEM) {
			snprintf(why, whylen, "n/a: iovec list of %zd bytes "
				 "does not fit NIC memory", len);
			return -ENOTSUP;
		}
		if (rc < 0)
			return rc;
		a.list = blob;
	}
	cc.args = &a;
	cc.args_len = sizeof(a);
	return bench_nic_ctx(n, &cc, ctx_p);
}

/* The first of "a|b|c" that handlers/ has, into buf. @return 1 found;
 * 0 (buf: the first name, for the message) */
static int
family_pick(const char *cands, char *buf, size_t len)
{
	const char *p = cands;

	for (;;) {
		size_t n = strcspn(p, "|");

		snprintf(buf, len, "%.*s", (int)n, p);
		if (bench_nic_has_family(buf))
			return 1;
		if (p[n] == '\0')
			break;
		p += n + 1;
	}
	snprintf(buf, len, "%.*s", (int)strcspn(cands, "|"), cands);
	return 0;
}

/* ---- options -------------------------------------------------------------- */


static const struct bench_cmd_opt unpack_opts[] = {
	{ "blocks", 1, "MIN:MAX vector block bytes, powers of two "
		       "(default 4:16384)" },
	{ "payload", 1, "payload bytes per packet (default 2048)" },
	{ "hpus", 1, "HPUs: 1 runs on the main thread, more on their own "
		     "threads (default 1)" },
	{ "strategies", 1, "comma list of host-ddt,host-mpi,specialized,"
			   "hpu-local,ro-cp,rw-cp,iovec,floor (default all)" },
	{ "prog", 1, "1 (default): ddt_general arguments carry the type's "
		     "compiled form, handlers resume in it; 0: segments and "
		     "checkpoints only" },
	{ "interval", 1, "checkpoint interval of ro-cp and rw-cp in bytes "
			 "(default: paper 000's model at the copy limit)" },
	{ "mode", 1, "preloaded (default) or wire: the frames through a "
		     "net_ring ethdev pair into the NIC's inbound loop; wire "
		     "runs scaling's sweep at the --hpus count (same message "
		     "and strategies; its rows add an hpus column)" },
	{ NULL, 0, NULL },
};

/* --mode wire: the options go to scaling too, which runs it */
static bool unpack_wire;
static bool unpack_hpus_given;
static bool unpack_strats_given;

static int
unpack_opt(const char *name, const char *arg)
{
	long long lo, hi, v;
	char tail;

	if (strcmp(name, "mode") == 0) {
		if (strcmp(arg, "preloaded") != 0 && strcmp(arg, "wire") != 0) {
			bench_err("bad --mode '%s': expected preloaded or wire",
				  arg);
			return -EINVAL;
		}
		unpack_wire = arg[0] == 'w';
		return bench_scaling_cmd.opt(name, arg);
	}
	/* every other option means the same to scaling */
	if (bench_scaling_cmd.opt(name, arg) != 0)
		return -EINVAL;
	if (strcmp(name, "hpus") == 0)
		unpack_hpus_given = true;
	if (strcmp(name, "prog") == 0) {
		if (strcmp(arg, "0") != 0 && strcmp(arg, "1") != 0) {
			bench_err("bad --prog '%s': expected 0 or 1", arg);
			return -EINVAL;
		}
		cfg.prog = arg[0] == '1';
		return 0;
	}
	if (strcmp(name, "strategies") == 0)
		unpack_strats_given = true;

	if (strcmp(name, "blocks") == 0) {
		if (sscanf(arg, "%lld:%lld%c", &lo, &hi, &tail) != 2 ||
		    lo < 1 || hi < lo || hi > (1ll << 30)) {
			bench_err("bad --blocks '%s': expected MIN:MAX with "
				  "1 <= MIN <= MAX", arg);
			return -EINVAL;
		}
		cfg.block_min = lo;
		cfg.block_max = hi;
		return 0;
	}
	if (strcmp(name, "interval") == 0) {
		if (sscanf(arg, "%lld%c", &v, &tail) != 1 || v < 1 ||
		    v > (1ll << 40)) {
			bench_err("bad --interval '%s': expected 1..2^40 bytes",
				  arg);
			return -EINVAL;
		}
		cfg.interval = v;
		return 0;
	}
	if (strcmp(name, "payload") == 0 || strcmp(name, "hpus") == 0) {
		int pay = name[0] == 'p';
		long long max = pay ? 65000 : SPIN_RT_HPUS_MAX;

		if (sscanf(arg, "%lld%c", &v, &tail) != 1 ||
		    v < (pay ? 64 : 1) || v > max) {
			bench_err("bad --%s '%s': expected %d..%lld", name, arg,
				  pay ? 64 : 1, max);
			return -EINVAL;
		}
		if (pay)
			cfg.payload = (uint32_t)v;
		else
			cfg.hpus = (unsigned)v;
		return 0;
	}
	/* strategies */
	{
		char buf[256], *save = NULL, *tok;

		snprintf(buf, sizeof(buf), "%s", arg);
		cfg.strat_mask = 0;
		for (tok = strtok_r(buf, ",", &save); tok != NULL;
		     tok = strtok_r(NULL, ",", &save)) {
			int s;

			for (s = 0; s < S_COUNT; s++)
				if (strcmp(tok, strats[s].name) == 0)
					break;
			if (s == S_COUNT) {
				bench_err("bad --strategies: unknown strategy "
					  "'%s'", tok);
				return -EINVAL;
			}
			cfg.strat_mask |= 1u << s;
		}
		if (cfg.strat_mask == 0) {
			bench_err("bad --strategies '%s': empty", arg);
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- buffers ---------------------------------------------------------------- */

static void
case_free(struct ucase *c)
{
	bench_free(c->packed);
	bench_free(c->contig);
	bench_free(c->win);
	bench_free(c->ref);
#ifdef SPINNIC_HAVE_MPI
	if (c->mtype != NULL)
		ddt_mpi_type_free(c->mtype);
	free(c->mtype);
#endif
	ddt_free(c->t);
	memset(c, 0, sizeof(*c));
}

/* Buffers of a committed case; the message is random bytes. */
static int
case_bufs(struct ucase *c, uint64_t *rng)
{
	int64_t ext = ddt_extent(c->t), tlb = ddt_true_lb(c->t);
	int64_t tub = tlb + ddt_true_extent(c->t), shift = (c->count - 1) * ext;
	int rc;

	c->msg = ddt_size(c->t) * c->count;
	c->lo = tlb + (shift < 0 ? shift : 0);
	c->span = tub + (shift > 0 ? shift : 0) - c->lo;
	c->packed = bench_alloc((size_t)c->msg);
	c->contig = bench_alloc((size_t)c->msg);
	c->win = bench_alloc((size_t)c->span);
	c->ref = bench_alloc((size_t)c->span);
	if (c->packed == NULL || c->contig == NULL || c->win == NULL ||
	    c->ref == NULL)
		return -ENOMEM;
	for (int64_t i = 0; i < c->msg; i += 8) {
		uint64_t r = bench_rand(rng);

		memcpy(c->packed + i, &r, c->msg - i < 8 ? (size_t)(c->msg - i)
							 : 8);
	}
	memset(c->ref, 0xa5, (size_t)c->span);
	rc = ddt_unpack(c->t, c->count, c->packed, origin(c->ref, c));
	if (rc < 0) {
		bench_err("ddt_unpack of %s: %s", c->label, ddt_strerror(rc));
		return rc;
	}
#ifdef SPINNIC_HAVE_MPI
	if ((cfg.strat_mask & (1u << S_HOST_MPI)) && c->msg <= INT32_MAX &&
	    c->count <= INT32_MAX) {
		c->mtype = calloc(1, sizeof(MPI_Datatype));
		if (c->mtype == NULL)
			return -ENOMEM;
		rc = ddt_mpi_type(c->t, DDT_MPI_MATCH_BOUNDS, c->mtype, NULL);
		if (rc < 0) {
			bench_err("%s: no MPI equivalent (%s); no host-mpi row",
				  c->label, ddt_strerror(rc));
			free(c->mtype);
			c->mtype = NULL;
		}
	}
#endif
	return 0;
}


static int
case_vector(struct ucase *c, int64_t bytes, int64_t b)
{
	int rc;

	memset(c, 0, sizeof(*c));
	snprintf(c->label, sizeof(c->label), "vector");
	c->block_bytes = b;
	c->count = 1;
	c->t = ddt_vector(bytes / b, b, 2 * b, ddt_base(DDT_BYTE));
	if (c->t == NULL) {
		bench_err("cannot build a vector of %" PRId64 " B blocks: %s",
			  b, ddt_strerror(errno));
		return -ENOMEM;
	}
	rc = ddt_commit(c->t);
	if (rc < 0)
		bench_err("commit: %s", ddt_strerror(rc));
	return rc;
}

static int
case_expr(struct ucase *c, const char *expr, int64_t bytes)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->label, sizeof(c->label), "%s", expr);
	return bench_type_from_expr(expr, bytes, &c->t, &c->count,
				    &c->block_bytes);
}

/* ---- runs --------------------------------------------------------------------- */

static void
case_evict(const struct ucase *c, struct bench_nic *n)
{
	bench_cache_evict(c->contig, (size_t)c->msg);
	bench_cache_evict(c->win, (size_t)c->span);
	bench_nic_evict(n);
}

/* One timed run of a host strategy. @return seconds, < 0 on failure */
static double
host_once(enum strat_id s, struct ucase *c, struct bench_nic *n)
{
	double t0, t1;
	int rc = 0;

	t0 = bench_now();
	bench_nic_copy_out(n, c->contig);
	if (s == S_HOST_DDT) {
		rc = ddt_unpack(c->t, c->count, c->contig, origin(c->win, c));
	} else {
#ifdef SPINNIC_HAVE_MPI
		int pos = 0;

		rc = MPI_Unpack(c->contig, (int)c->msg, &pos,
				origin(c->win, c), (int)c->count,
				*(MPI_Datatype *)c->mtype, MPI_COMM_WORLD);
		if (rc != MPI_SUCCESS)
			rc = -EIO;
#else
		rc = -ENOTSUP;
#endif
	}
	t1 = bench_now();
	if (rc != 0) {
		bench_err("%s failed: %s", strats[s].name, ddt_strerror(rc));
		return -1;
	}
	return t1 - t0;
}

static double
nic_once(struct ucase *c, struct bench_nic *n, uint32_t ctx)
{
	struct spin_msg_result r;
	double t = bench_nic_run(n, ctx, c->win, (uint64_t)c->span, &r);

	if (t < 0)
		return t;
	if (r.status != SPIN_SUCCESS || r.bytes != (uint64_t)c->msg) {
		bench_err("message status %d, %" PRIu64 " of %" PRId64
			  " bytes, %u handler errors, %u DMAs rejected",
			  (int)r.status, r.bytes, c->msg, r.handler_errors,
			  r.dma_rejects);
		return -1;
	}
	return t;
}

struct srow {
	int avail;          /* 0: n/a (why) */
	char why[96];
	double best;        /* seconds */
	int64_t interval;   /* checkpoint interval Δr, 0: none */
	int verified;       /* 1 ok, 0 mismatch, -1 not checked */
};

/* Best of reps after one untimed warm-up (or every run cold), then
 * --verify on a fresh window. */
static int
run_strat(const struct bench_opts *o, enum strat_id s, struct ucase *c,
	  struct bench_nic *n, struct srow *row)
{
	const struct strat *st = &strats[s];
	struct bench_floor *fl = NULL;
	struct ddt_class_info ci;
	uint32_t ctx = 0;
	int rc = 0;

	memset(row, 0, sizeof(*row));
	row->verified = -1;
	if (st->setup != NULL) {
		const char *cands = st->family[class_slot(c, &ci)];
		char fam[64];

		if (cands == NULL) {
			snprintf(row->why, sizeof(row->why),
				 "n/a: no %s handler for the %s class", st->name,
				 ddt_class_name(ci.cls));
			return 0;
		}
		if (!family_pick(cands, fam, sizeof(fam))) {
			snprintf(row->why, sizeof(row->why),
				 "n/a: no handler family %s", fam);
			return 0;
		}
		rc = st->setup(st, fam, n, c, &ctx, &row->interval, row->why,
			       sizeof(row->why));
		if (rc < 0)
			bench_nic_blobs_free(n);
		if (rc == -ENOTSUP)
			return 0;
		if (rc < 0)
			return rc;
	} else if (s == S_HOST_MPI && c->mtype == NULL) {
		snprintf(row->why, sizeof(row->why), "n/a: no MPI type");
		return 0;
	} else if (s == S_FLOOR) {
		fl = bench_floor_create(n, c->t, c->count, c->lo);
		if (fl == NULL)
			return -ENOMEM;
	}
	row->avail = 1;
	for (int r = o->cold ? 0 : -1; r < o->reps; r++) {
		double t;

		if (o->cold)
			case_evict(c, n);
		t = fl != NULL ? bench_floor_run_threads(fl, c->win,
							 cfg.hpus) :
			st->setup != NULL ? nic_once(c, n, ctx) :
			host_once(s, c, n);
		if (t < 0) {
			rc = -EIO;
			goto out;
		}
		if (r == 0 || (r > 0 && t < row->best))
			row->best = t;
	}
	if (o->verify) {
		int64_t at = -1;

		memset(c->win, 0xa5, (size_t)c->span);
		if (fl != NULL)
			(void)bench_floor_run_threads(fl, c->win, cfg.hpus);
		else if ((st->setup != NULL ? nic_once(c, n, ctx) :
			  host_once(s, c, n)) < 0) {
			rc = -EIO;
			goto out;
		}
		for (int64_t i = 0; i < c->span; i++)
			if (c->win[i] != c->ref[i]) {
				at = i;
				break;
			}
		row->verified = at < 0;
		if (at >= 0)
			bench_err("verify: %s of %s (block %" PRId64 ") differs "
				  "from ddt_unpack at window byte %" PRId64,
				  st->name, c->label, c->block_bytes, at);
	}
out:
	bench_floor_free(fl);
	if (st->setup != NULL)
		bench_nic_ctx_free(n, ctx);
	return rc;
}

static int
run_case(const struct bench_opts *o, struct ucase *c, struct bench_nic *n,
	 struct bench_table *tab, uint64_t *rng, int *mismatch_p)
{
	struct srow rows[S_COUNT];
	double lim, host_g = 0;
	int rc;

	rc = case_bufs(c, rng);
	if (rc < 0)
		return rc;
	rc = bench_nic_load(n, c->packed, (uint64_t)c->msg);
	if (rc < 0)
		return rc;
	/* the limit first (the checkpoint model uses it): the same bytes
	 * copied, best of as many runs */
	lim = bench_copy_limit_cold((size_t)c->msg, o->reps, o->cold);
	if (lim < 0)
		return -ENOMEM;
	c->limit_gbit_s = lim;
	for (int s = 0; s < S_COUNT && rc == 0; s++) {
		if (!(cfg.strat_mask & (1u << s))) {
			rows[s].avail = -1;
			continue;
		}
#ifndef SPINNIC_HAVE_MPI
		if (s == S_HOST_MPI) {
			rows[s].avail = -1; /* no MPI in this build: no row */
			continue;
		}
#endif
		rc = run_strat(o, (enum strat_id)s, c, n, &rows[s]);
	}
	if (rc < 0)
		return rc;
	lim = c->limit_gbit_s;
	if (rows[S_HOST_DDT].avail == 1)
		host_g = bench_gbit_s(c->msg, rows[S_HOST_DDT].best);
	for (int s = 0; s < S_COUNT; s++) {
		const struct srow *w = &rows[s];
		double g;

		if (w->avail < 0)
			continue;
		rc = bench_table_row(tab);
		if (rc < 0)
			return rc;
		bench_table_set_str(tab, "strategy", strats[s].name);
		if (o->type != NULL)
			bench_table_set_str(tab, "type", c->label);
		bench_table_set_int(tab, "block_bytes", c->block_bytes);
		bench_table_set_int(tab, "bytes", c->msg);
		bench_table_set_int(tab, "pkts", bench_nic_npkts(n));
		bench_table_set_int(tab, "hpus",
				    strats[s].setup != NULL ? cfg.hpus : 0);
		bench_table_set_num(tab, "limit_gbit_s", lim);
		if (!w->avail) {
			bench_table_set_str(tab, "note", w->why);
			continue;
		}
		g = bench_gbit_s(c->msg, w->best);
		bench_table_set_num(tab, "gbit_s", g);
		bench_table_set_num(tab, "ratio", lim > 0 ? g / lim : 0);
		if (host_g > 0)
			bench_table_set_num(tab, "speedup", g / host_g);
		if (w->interval > 0)
			bench_table_set_int(tab, "interval", w->interval);
		if (w->verified >= 0)
			bench_table_set_str(tab, "verify",
					    w->verified ? "ok" : "FAIL");
		if (w->verified == 0)
			*mismatch_p = 1;
	}
	return 0;
}

static int
unpack_run_wire(const struct bench_opts *o)
{
	char blocks[64];

	/* unpack's defaults where scaling's differ */
	snprintf(blocks, sizeof(blocks), "%lld:%lld",
		 (long long)cfg.block_min, (long long)cfg.block_max);
	if (bench_scaling_cmd.opt("blocks", blocks) != 0 ||
	    (!unpack_hpus_given && bench_scaling_cmd.opt("hpus", "1") != 0) ||
	    (!unpack_strats_given &&
	     bench_scaling_cmd.opt("strategies", "host-ddt,host-mpi,"
				   "specialized,hpu-local,ro-cp,rw-cp,"
				   "iovec") != 0))
		return -EINVAL;
	return bench_scaling_cmd.run(o);
}

static int
unpack_run(const struct bench_opts *o)
{
	struct bench_col cols[16];
	struct bench_table *tab = NULL;
	struct bench_nic *n = NULL;
	int64_t bytes = o->bytes ? o->bytes : UNPACK_BYTES_DEFAULT;
	uint64_t rng = o->seed;
	int nc = 0, rc = 0, mismatch = 0;
	struct ucase c;

	if (unpack_wire)
		return unpack_run_wire(o);

	cols[nc++] = (struct bench_col){ "strategy", BENCH_COL_STR, 0 };
	if (o->type != NULL)
		cols[nc++] = (struct bench_col){ "type", BENCH_COL_STR, 0 };
	cols[nc++] = (struct bench_col){ "block_bytes", BENCH_COL_INT, 0 };
	cols[nc++] = (struct bench_col){ "bytes", BENCH_COL_INT, 0 };
	cols[nc++] = (struct bench_col){ "pkts", BENCH_COL_INT, 0 };
	cols[nc++] = (struct bench_col){ "hpus", BENCH_COL_INT, 0 };
	cols[nc++] = (struct bench_col){ "gbit_s", BENCH_COL_NUM, 2 };
	cols[nc++] = (struct bench_col){ "limit_gbit_s", BENCH_COL_NUM, 2 };
	cols[nc++] = (struct bench_col){ "ratio", BENCH_COL_NUM, 3 };
	cols[nc++] = (struct bench_col){ "speedup", BENCH_COL_NUM, 3 };
	cols[nc++] = (struct bench_col){ "interval", BENCH_COL_INT, 0 };
	if (o->verify)
		cols[nc++] = (struct bench_col){ "verify", BENCH_COL_STR, 0 };
	cols[nc++] = (struct bench_col){ "note", BENCH_COL_STR, 0 };

	if (cfg.payload == 0 || bench_nic_eal_init() < 0)
		return -EIO;
#ifdef SPINNIC_HAVE_MPI
	if ((cfg.strat_mask & (1u << S_HOST_MPI)) && ddt_mpi_init() < 0) {
		rc = -EIO;
		goto out;
	}
#endif
	n = bench_nic_create(cfg.hpus, cfg.payload);
	if (n == NULL) {
		rc = -errno;
		goto out;
	}
	tab = bench_table_create(cols, nc);
	if (tab == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if (o->type != NULL) {
		rc = case_expr(&c, o->type, bytes);
		if (rc == 0)
			rc = run_case(o, &c, n, tab, &rng, &mismatch);
		case_free(&c);
	}
	for (int64_t b = cfg.block_min; o->type == NULL && rc == 0 &&
	     b <= cfg.block_max && b <= bytes; b *= 2) {
		rc = case_vector(&c, bytes, b);
		if (rc == 0)
			rc = run_case(o, &c, n, tab, &rng, &mismatch);
		case_free(&c);
	}
	if (rc == 0)
		rc = bench_table_emit(tab, o);
out:
	bench_table_free(tab);
	bench_nic_destroy(n);
	bench_nic_eal_fini();
	return bench_run_status(rc, mismatch);
}

const struct bench_cmd bench_unpack_cmd = {
	.name = "unpack",
	.summary = "receive of a typed message per strategy on the preloaded "
		   "NIC (paper 000 Fig. 8)",
	.opts = unpack_opts,
	.opt = unpack_opt,
	.run = unpack_run,
};
