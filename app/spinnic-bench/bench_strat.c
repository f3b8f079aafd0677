/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench: the receive strategies of DESIGN §7 on one case (see
 * bench_strat.h). Host strategies copy the packets' payloads into one
 * contiguous buffer (the non-processing path) and unpack on the host; NIC
 * strategies install the handler family that implements them:
 *
 *   specialized  ddt_vector (vector, contig) or ddt_iblock (indexed-block)
 *   hpu-local, ro-cp, rw-cp
 *                ddt_general with the scheduling its arguments ask for
 *   iovec        ddt_iovec, the flattened list in a NIC memory blob
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddt.h>
#include <spin_ddt_args.h>
#include <spin_handler_args.h>

#include "bench_floor.h"
#include "bench_strat.h"
#include "bench_wire.h"
#ifdef SPINNIC_HAVE_MPI
#include "ddt_mpi.h"
#endif

static const char *const strat_names[BS_COUNT] = {
	[BS_HOST_DDT] = "host-ddt",
	[BS_HOST_MPI] = "host-mpi",
	[BS_SPECIALIZED] = "specialized",
	[BS_HPU_LOCAL] = "hpu-local",
	[BS_RO_CP] = "ro-cp",
	[BS_RW_CP] = "rw-cp",
	[BS_IOVEC] = "iovec",
	[BS_FLOOR] = "floor",
};

const char *
bench_strat_name(enum bench_strat s)
{
	return (unsigned)s < BS_COUNT ? strat_names[s] : "?";
}

int
bench_strat_parse(const char *opt, const char *list, unsigned *mask_p)
{
	char buf[256], *save = NULL, *tok;
	unsigned mask = 0;

	if (strlen(list) >= sizeof(buf)) {
		bench_err("bad --%s: list too long", opt);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		int s;

		for (s = 0; s < BS_COUNT; s++)
			if (strcmp(tok, strat_names[s]) == 0)
				break;
		if (s == BS_COUNT) {
			bench_err("bad --%s: unknown strategy '%s' (expected "
				  "host-ddt,host-mpi,specialized,hpu-local,"
				  "ro-cp,rw-cp,iovec,floor)", opt, tok);
			return -EINVAL;
		}
		mask |= 1u << s;
	}
	if (mask == 0) {
		bench_err("bad --%s '%s': empty", opt, list);
		return -EINVAL;
	}
	*mask_p = mask;
	return 0;
}

int
bench_strat_opt(struct bench_strat_cfg *cfg, unsigned *mask_p,
		const char *name, const char *arg)
{
	long long v, min, max;
	char tail;

	if (strcmp(name, "strategies") == 0)
		return bench_strat_parse(name, arg, mask_p) < 0 ? -EINVAL : 0;
	if (strcmp(name, "mode") == 0) {
		if (strcmp(arg, "preloaded") != 0 && strcmp(arg, "wire") != 0) {
			bench_err("bad --mode '%s': expected preloaded or wire",
				  arg);
			return -EINVAL;
		}
		cfg->wire = arg[0] == 'w';
		return 0;
	}
	if (strcmp(name, "payload") == 0) {
		min = 64;
		max = 65000;
	} else if (strcmp(name, "hpus") == 0) {
		min = 1;
		max = SPIN_RT_HPUS_MAX;
	} else if (strcmp(name, "interval") == 0) {
		min = 1;
		max = 1ll << 40;
	} else if (strcmp(name, "prog") == 0) {
		min = 0;
		max = 1;
	} else {
		return 1;
	}
	if (sscanf(arg, "%lld%c", &v, &tail) != 1 || v < min || v > max) {
		bench_err("bad --%s '%s': expected an integer in [%lld, %lld]",
			  name, arg, min, max);
		return -EINVAL;
	}
	if (strcmp(name, "payload") == 0)
		cfg->payload = (uint32_t)v;
	else if (strcmp(name, "hpus") == 0)
		cfg->hpus = (unsigned)v;
	else if (strcmp(name, "prog") == 0)
		cfg->prog = (int)v;
	else
		cfg->interval = v;
	return 0;
}

/* ---- the case -------------------------------------------------------------- */

static char *
origin(char *span_buf, const struct bench_case *c)
{
	return (char *)((uintptr_t)span_buf - (uintptr_t)c->lo);
}

void
bench_case_free(struct bench_case *c)
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

int
bench_case_init(struct bench_case *c, const char *label, struct ddt_type *t,
		int64_t count, int want_mpi, uint64_t *rng)
{
	int64_t ext, tlb, tub, shift, nb;
	int rc;

	memset(c, 0, sizeof(*c));
	snprintf(c->label, sizeof(c->label), "%s", label);
	rc = ddt_commit(t);
	if (rc < 0) {
		bench_err("%s: commit: %s", label, ddt_strerror(rc));
		return rc;
	}
	c->t = ddt_ref(t);
	c->count = count;
	ext = ddt_extent(t);
	tlb = ddt_true_lb(t);
	tub = tlb + ddt_true_extent(t);
	shift = (count - 1) * ext;
	c->msg = ddt_size(t) * count;
	if (c->msg <= 0 || count < 1) {
		bench_err("%s: the message holds no data", label);
		return -EINVAL;
	}
	if (bench_span_bytes(t, count) > BENCH_SPAN_MAX) {
		bench_err("%s: spans more than %lld bytes", label,
			  BENCH_SPAN_MAX);
		return -E2BIG;
	}
	nb = ddt_count_blocks(t, count);
	c->block_bytes = nb > 0 ? c->msg / nb : 0;
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

		memcpy(c->packed + i, &r,
		       c->msg - i < 8 ? (size_t)(c->msg - i) : 8);
	}
	memset(c->ref, 0xa5, (size_t)c->span);
	rc = ddt_unpack(c->t, c->count, c->packed, origin(c->ref, c));
	if (rc < 0) {
		bench_err("ddt_unpack of %s: %s", label, ddt_strerror(rc));
		return rc;
	}
#ifdef SPINNIC_HAVE_MPI
	if (want_mpi && c->msg <= INT32_MAX && c->count <= INT32_MAX) {
		c->mtype = calloc(1, sizeof(MPI_Datatype));
		if (c->mtype == NULL)
			return -ENOMEM;
		rc = ddt_mpi_type(c->t, DDT_MPI_MATCH_BOUNDS, c->mtype, NULL);
		if (rc < 0) {
			bench_err("%s: no MPI equivalent (%s); no host-mpi row",
				  label, ddt_strerror(rc));
			free(c->mtype);
			c->mtype = NULL;
		}
	}
#else
	(void)want_mpi;
#endif
	return 0;
}

int
bench_case_limit(struct bench_case *c, const struct bench_opts *o)
{
	double g = bench_copy_limit_cold((size_t)c->msg, o->reps, o->cold);

	if (g < 0)
		return -ENOMEM;
	c->limit_gbit_s = g;
	return 0;
}

/* ---- NIC strategies: argument blocks --------------------------------------- */

int64_t
bench_strat_model_interval(const struct bench_strat_cfg *cfg,
			   const struct bench_case *c, size_t ckpt_size)
{
	struct ddt_ckpt_model m;
	double t_pkt;

	if (cfg->interval > 0)
		return cfg->interval;
	t_pkt = c->limit_gbit_s > 0 ?
		(double)cfg->payload * 8 / (c->limit_gbit_s * 1e9) : 1e-7;
	memset(&m, 0, sizeof(m));
	m.epsilon = 0.2;
	m.nic_mem = 16u << 20;
	m.hpus = cfg->hpus;
	m.pkt_payload = cfg->payload;
	m.t_pkt = t_pkt;
	m.t_ph = t_pkt;
	m.ckpt_size = ckpt_size;
	m.msg_size = c->msg;
	return ddt_ckpt_select_interval(&m);
}

/* An argument block and how to install it. */
struct strat_args {
	struct spin_ctx_conf cc;
	void *buf;            /* owned; cc.args points here or to vec */
	struct spin_vec_args vec;
	struct spin_iovec_args iov;
	void *list;           /* iovec: owned, for a NIC memory blob */
	uint64_t list_len;
	int64_t interval;
	double build_s;
};

/* specialized: ddt_vector for the vector and contig classes, ddt_iblock for
 * indexed-block. @return 0; -ENOTSUP (why); another negative errno */
static int
args_special(const struct bench_case *c, struct strat_args *a, char *why,
	     size_t whylen)
{
	struct ddt_class_info ci;
	ssize_t len;
	double t0 = bench_now();
	int rc;

	rc = ddt_classify(c->t, c->count, &ci);
	if (rc < 0 || ci.cls == DDT_CLASS_GENERAL) {
		snprintf(why, whylen, "n/a: no specialized handler for the %s "
			 "class", rc < 0 ? "unknown" : ddt_class_name(ci.cls));
		return -ENOTSUP;
	}
	a->cc.family = ci.cls == DDT_CLASS_INDEXED_BLOCK ? "ddt_iblock" :
		"ddt_vector";
	if (!bench_nic_has_family(a->cc.family)) {
		snprintf(why, whylen, "n/a: no handler family %s",
			 a->cc.family);
		return -ENOTSUP;
	}
	if (ci.cls != DDT_CLASS_INDEXED_BLOCK) {
		rc = spin_ddt_vec_args(c->t, c->count, -c->lo, &a->vec);
		if (rc < 0) {
			snprintf(why, whylen, "n/a: ddt_vector args: %s",
				 ddt_strerror(rc));
			return -ENOTSUP;
		}
		a->cc.args = &a->vec;
		a->cc.args_len = sizeof(a->vec);
		a->build_s = bench_now() - t0;
		return 0;
	}
	len = spin_ddt_iblock_args(c->t, c->count, -c->lo, NULL, 0);
	if (len < 0 || len > UINT32_MAX) {
		snprintf(why, whylen, "n/a: ddt_iblock args: %s",
			 ddt_strerror(len < 0 ? (int)len : -E2BIG));
		return -ENOTSUP;
	}
	a->buf = malloc((size_t)len);
	if (a->buf == NULL)
		return -ENOMEM;
	if (spin_ddt_iblock_args(c->t, c->count, -c->lo, a->buf,
				 (size_t)len) != len) {
		bench_err("ddt_iblock args changed size");
		return -EIO;
	}
	a->build_s = bench_now() - t0;
	a->cc.args = a->buf;
	a->cc.args_len = (uint32_t)len;
	return 0;
}

/* hpu-local, ro-cp, rw-cp: ddt_general at checkpoint interval @p interval
 * (0: bench_strat_model_interval()); build_s times the block's making
 * (serialized type and checkpoints), not the sizing. */
static int
args_general(enum bench_strat s, const struct bench_strat_cfg *cfg,
	     const struct bench_case *c, int64_t interval,
	     struct strat_args *a, char *why, size_t whylen)
{
	struct spin_ddt_plan plan;
	struct spin_ddt_sched sc;
	ssize_t len;
	double t0;

	a->cc.family = "ddt_general";
	if (!bench_nic_has_family(a->cc.family)) {
		snprintf(why, whylen, "n/a: no handler family ddt_general");
		return -ENOTSUP;
	}
	memset(&plan, 0, sizeof(plan));
	plan.strategy = s == BS_HPU_LOCAL ? SPIN_DDT_HPU_LOCAL :
		s == BS_RO_CP ? SPIN_DDT_RO_CP : SPIN_DDT_RW_CP;
	plan.nhpu = cfg->hpus;
	plan.pkt_payload = cfg->payload;
	plan.origin = -c->lo;
	plan.stats_off = SPIN_DDT_STATS_NONE;
	plan.flags = cfg->prog ? SPIN_DDT_F_PROG : 0;
	if (s != BS_HPU_LOCAL) {
		if (interval <= 0) {
			struct ddt_ckpt_set *cs =
				ddt_ckpt_create(c->t, c->count, c->msg);

			if (cs == NULL) {
				bench_err("ddt_ckpt_create: %s",
					  ddt_strerror(errno));
				return -ENOMEM;
			}
			interval = bench_strat_model_interval(
				cfg, c, ddt_ckpt_size(cs));
			ddt_ckpt_free(cs);
		}
		if (interval <= 0) {
			snprintf(why, whylen, "n/a: no checkpoint interval "
				 "fits: %s", ddt_strerror((int)interval));
			return -ENOTSUP;
		}
		plan.interval = interval;
	}
	len = spin_ddt_general_args(c->t, c->count, &plan, NULL, 0, &sc);
	if (len < 0 || len > UINT32_MAX) {
		snprintf(why, whylen, "n/a: ddt_general args: %s",
			 ddt_strerror(len < 0 ? (int)len : -E2BIG));
		return -ENOTSUP;
	}
	a->buf = aligned_alloc(8, ((size_t)len + 7) & ~(size_t)7);
	if (a->buf == NULL)
		return -ENOMEM;
	t0 = bench_now();
	if (spin_ddt_general_args(c->t, c->count, &plan, a->buf, (size_t)len,
				  &sc) != len) {
		bench_err("ddt_general args changed size");
		return -EIO;
	}
	a->build_s = bench_now() - t0;
	a->cc.args = a->buf;
	a->cc.args_len = (uint32_t)len;
	a->cc.policy = sc.blocked_rr ? SPINNIC_SCHED_BLOCKED_RR :
		SPINNIC_SCHED_DEFAULT;
	a->cc.delta_p = sc.delta_p;
	a->cc.nvhpu = sc.nvhpu;
	/* RW-CP: Δr rounded up to whole packets, Δp = Δr / k */
	if (s == BS_RW_CP)
		a->interval = (int64_t)sc.delta_p * cfg->payload;
	else if (s == BS_RO_CP)
		a->interval = plan.interval;
	return 0;
}

/* iovec: ddt_iovec, the flattened blocks (spin_ddt_iovec_args()) in a
 * list the installer puts in NIC memory. @return 0; -ENOTSUP (why) */
static int
args_iovec(const struct bench_case *c, struct strat_args *a, char *why,
	   size_t whylen)
{
	double t0 = bench_now();
	ssize_t len;

	a->cc.family = "ddt_iovec";
	if (!bench_nic_has_family(a->cc.family)) {
		snprintf(why, whylen, "n/a: no handler family ddt_iovec");
		return -ENOTSUP;
	}
	len = spin_ddt_iovec_args(c->t, c->count, -c->lo, 0, &a->iov, NULL, 0);
	if (len < 0) {
		snprintf(why, whylen, "n/a: ddt_iovec args: %s",
			 ddt_strerror((int)len));
		return -ENOTSUP;
	}
	if (len > 0) {
		a->list = malloc((size_t)len);
		if (a->list == NULL)
			return -ENOMEM;
		if (spin_ddt_iovec_args(c->t, c->count, -c->lo, 0, &a->iov,
					a->list, (size_t)len) != len) {
			bench_err("ddt_iovec list changed size");
			return -EIO;
		}
		a->list_len = (uint64_t)len;
	}
	a->build_s = bench_now() - t0;
	a->cc.args = &a->iov;
	a->cc.args_len = sizeof(a->iov);
	return 0;
}

/* @return 0; -ENOTSUP (why); another negative errno (logged) */
static int
strat_args(enum bench_strat s, const struct bench_strat_cfg *cfg,
	   const struct bench_case *c, int64_t interval, struct strat_args *a,
	   char *why, size_t whylen)
{
	memset(a, 0, sizeof(*a));
	switch (s) {
	case BS_SPECIALIZED:
		return args_special(c, a, why, whylen);
	case BS_HPU_LOCAL:
	case BS_RO_CP:
	case BS_RW_CP:
		return args_general(s, cfg, c, interval, a, why, whylen);
	case BS_IOVEC:
		return args_iovec(c, a, why, whylen);
	default:
		return -EINVAL;
	}
}

double
bench_strat_ckpt_build(enum bench_strat s, const struct bench_strat_cfg *cfg,
		       const struct bench_case *c, int64_t interval,
		       int64_t *len_p)
{
	struct strat_args a;
	char why[96];
	int rc;

	if (s != BS_RO_CP && s != BS_RW_CP)
		return -EINVAL;
	rc = strat_args(s, cfg, c, interval, &a, why, sizeof(why));
	free(a.buf);
	free(a.list);
	if (rc < 0) {
		if (rc == -ENOTSUP)
			bench_err("%s of %s: %s", bench_strat_name(s),
				  c->label, why);
		return rc;
	}
	*len_p = a.cc.args_len;
	return a.build_s;
}

/* ---- runs -------------------------------------------------------------------- */

static void
case_evict(const struct bench_case *c, struct bench_nic *n)
{
	bench_cache_evict(c->contig, (size_t)c->msg);
	bench_cache_evict(c->win, (size_t)c->span);
	bench_nic_evict(n);
}

/* The wire NIC of --mode wire, made for the shape asked (one at a time). */
static struct bench_wire *wire_nic;

static struct bench_wire *
wire_get(const struct bench_strat_cfg *cfg)
{
	if (wire_nic != NULL && (bench_wire_nhpu(wire_nic) != cfg->hpus ||
				 bench_wire_payload(wire_nic) != cfg->payload)) {
		bench_wire_destroy(wire_nic);
		wire_nic = NULL;
	}
	if (wire_nic == NULL)
		wire_nic = bench_wire_create(cfg->hpus, cfg->payload);
	return wire_nic;
}

/* One timed host receive: the contiguous receive (the preloaded packets
 * copied out, or the frames through the wire), then the unpack.
 * @return seconds, < 0 on failure */
static double
host_once(enum bench_strat s, struct bench_case *c, struct bench_nic *n,
	  struct bench_wire *w)
{
	double t0, t1, tw = 0;
	int rc = 0;

	if (w != NULL) {
		tw = bench_wire_run_contig(w, c->packed, (uint64_t)c->msg,
					   c->contig);
		if (tw < 0)
			return tw;
	}
	t0 = bench_now();
	if (w == NULL)
		bench_nic_copy_out(n, c->contig);
	if (s == BS_HOST_DDT) {
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
		bench_err("%s failed: %s", bench_strat_name(s),
			  ddt_strerror(rc));
		return -1;
	}
	return tw + t1 - t0;
}

static double
nic_once(struct bench_case *c, struct bench_nic *n, struct bench_wire *w,
	 uint32_t ctx)
{
	struct spin_msg_result r;
	double t = w != NULL ?
		bench_wire_run(w, ctx, c->packed, (uint64_t)c->msg, c->win,
			       (uint64_t)c->span, &r) :
		bench_nic_run(n, ctx, c->win, (uint64_t)c->span, &r);

	if (t < 0)
		return t;
	if (r.status != SPIN_SUCCESS || r.bytes != (uint64_t)c->msg) {
		bench_err("%s: message status %d, %" PRIu64 " of %" PRId64
			  " bytes, %u handler errors, %u DMAs rejected",
			  c->label, (int)r.status, r.bytes, c->msg,
			  r.handler_errors, r.dma_rejects);
		return -1;
	}
	return t;
}

int
bench_strat_run(const struct bench_opts *o, const struct bench_strat_cfg *cfg,
		enum bench_strat s, struct bench_case *c, struct bench_nic *n,
		struct bench_strat_row *row)
{
	int nic = (BS_NIC_MASK >> s) & 1;
	struct bench_floor *fl = NULL;
	struct bench_wire *w = NULL;
	uint32_t ctx = 0;
	int rc = 0;

	memset(row, 0, sizeof(*row));
	row->verified = -1;
	if (cfg->wire) {
		w = wire_get(cfg);
		if (w == NULL)
			return errno ? -errno : -EIO;
	}
	if (nic) {
		struct strat_args a;

		rc = strat_args(s, cfg, c, cfg->interval, &a, row->why,
				sizeof(row->why));
		if (rc == 0 && a.list != NULL) {
			/* the iovec list lives in NIC memory */
			uint32_t blob = 0;

			rc = w != NULL ?
				bench_wire_blob(w, a.list, a.list_len, &blob) :
				bench_nic_blob(n, a.list, a.list_len, &blob);
			if (rc == -ENOSPC || rc == -ENOMEM) {
				snprintf(row->why, sizeof(row->why),
					 "n/a: iovec list of %" PRIu64 " bytes "
					 "does not fit NIC memory", a.list_len);
				rc = -ENOTSUP;
			}
			a.iov.list = blob;
			row->nic_bytes += a.list_len;
		}
		if (rc == 0)
			rc = w != NULL ? bench_wire_ctx(w, &a.cc, &ctx) :
				bench_nic_ctx(n, &a.cc, &ctx);
		free(a.buf);
		free(a.list);
		if (rc < 0) {
			if (w != NULL)
				bench_wire_blobs_free(w);
			bench_nic_blobs_free(n);
		}
		if (rc == -ENOTSUP)
			return 0;
		if (rc < 0)
			return rc;
		row->interval = a.interval;
		row->nic_bytes += a.cc.args_len;
		row->setup_s = a.build_s;
	} else if (s == BS_HOST_MPI && c->mtype == NULL) {
		snprintf(row->why, sizeof(row->why), "n/a: no MPI type");
		return 0;
	} else if (s == BS_FLOOR) {
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
							 cfg->hpus) :
			nic ? nic_once(c, n, w, ctx) : host_once(s, c, n, w);
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
			(void)bench_floor_run_threads(fl, c->win, cfg->hpus);
		else if ((nic ? nic_once(c, n, w, ctx) :
			  host_once(s, c, n, w)) < 0) {
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
			bench_err("verify: %s of %s differs from ddt_unpack "
				  "at window byte %" PRId64,
				  bench_strat_name(s), c->label, at);
	}
out:
	bench_floor_free(fl);
	if (nic && w != NULL)
		bench_wire_ctx_free(w, ctx);
	else if (nic)
		bench_nic_ctx_free(n, ctx);
	return rc;
}

/* ---- environment ------------------------------------------------------------- */

int
bench_strat_env_init(unsigned mask, const struct bench_strat_cfg *cfg,
		     struct bench_nic **n_p)
{
	if (n_p != NULL)
		*n_p = NULL;
	if (bench_nic_eal_init() < 0)
		return -EIO;
#ifdef SPINNIC_HAVE_MPI
	if ((mask & (1u << BS_HOST_MPI)) && ddt_mpi_init() < 0) {
		bench_nic_eal_fini();
		return -EIO;
	}
#else
	(void)mask;
#endif
	if (cfg != NULL && n_p != NULL) {
		*n_p = bench_nic_create(cfg->hpus, cfg->payload);
		if (*n_p == NULL) {
			int rc = -errno;

			bench_nic_eal_fini();
			return rc < 0 ? rc : -EIO;
		}
	}
	return 0;
}

void
bench_strat_env_fini(struct bench_nic *n)
{
	bench_wire_destroy(wire_nic);
	wire_nic = NULL;
	bench_nic_destroy(n);
	bench_nic_eal_fini();
}
