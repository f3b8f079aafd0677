/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench ddt: host pack/unpack throughput of lib/ddt beside the system
 * MPI's MPI_Pack/MPI_Unpack (when built with it) and the streaming-copy limit
 * of the same bytes, for vector, indexed_block and indexed layouts with
 * blocks of 4 B .. 16 KiB (or one --type).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddt.h>

#include "bench.h"
#ifdef SPINNIC_HAVE_MPI
#include "ddt_mpi.h"
#endif

#define DDT_BYTES_DEFAULT (4ll << 20)

enum layout { L_VECTOR, L_INDEXED_BLOCK, L_INDEXED, L_COUNT };

static const char *const layout_names[L_COUNT] = {
	"vector", "indexed_block", "indexed",
};

static struct {
	unsigned int layouts;       /* bit per enum layout */
	int64_t block_min, block_max;
} cfg = { (1u << L_COUNT) - 1, 4, 16384 };

static const struct bench_cmd_opt ddt_opts[] = {
	{ "layouts", 1, "comma list of vector,indexed_block,indexed "
			"(default all)" },
	{ "blocks", 1, "MIN:MAX block bytes, powers of two (default 4:16384)" },
	{ NULL, 0, NULL },
};

static int
ddt_opt(const char *name, const char *arg)
{
	if (strcmp(name, "layouts") == 0) {
		char buf[128], *save = NULL, *tok;

		snprintf(buf, sizeof(buf), "%s", arg);
		cfg.layouts = 0;
		for (tok = strtok_r(buf, ",", &save); tok != NULL;
		     tok = strtok_r(NULL, ",", &save)) {
			int l;

			for (l = 0; l < L_COUNT; l++)
				if (strcmp(tok, layout_names[l]) == 0)
					break;
			if (l == L_COUNT) {
				bench_err("bad --layouts: unknown layout '%s'",
					  tok);
				return -EINVAL;
			}
			cfg.layouts |= 1u << l;
		}
		if (cfg.layouts == 0) {
			bench_err("bad --layouts '%s': empty", arg);
			return -EINVAL;
		}
		return 0;
	}
	/* blocks */
	{
		long long lo, hi;
		char tail;

		if (sscanf(arg, "%lld:%lld%c", &lo, &hi, &tail) != 2 ||
		    lo < 1 || hi < lo || hi > (1ll << 30)) {
			bench_err("bad --blocks '%s': expected MIN:MAX with "
				  "1 <= MIN <= MAX", arg);
			return -EINVAL;
		}
		cfg.block_min = lo;
		cfg.block_max = hi;
	}
	return 0;
}

/* ---- the layouts -------------------------------------------------------- */

struct ddt_case {
	char label[64];
	int64_t block_bytes;
	struct ddt_type *t;
	int64_t count;
};

/* n blocks of b bytes, stride 2b. */
static struct ddt_type *
make_vector(int64_t bytes, int64_t b)
{
	return ddt_vector(bytes / b, b, 2 * b, ddt_base(DDT_BYTE));
}

/* n blocks of b bytes at n random distinct slots of 2n, in random order. */
static struct ddt_type *
make_indexed_block(int64_t bytes, int64_t b, uint64_t *rng)
{
	int64_t n = bytes / b, *slots, *displs;
	struct ddt_type *t = NULL;

	slots = malloc((size_t)(2 * n) * sizeof(*slots));
	displs = malloc((size_t)n * sizeof(*displs));
	if (slots != NULL && displs != NULL) {
		for (int64_t i = 0; i < 2 * n; i++)
			slots[i] = i;
		for (int64_t i = 0; i < n; i++) {
			int64_t j = i + (int64_t)(bench_rand(rng) %
						  (uint64_t)(2 * n - i));
			int64_t s = slots[j];

			slots[j] = slots[i];
			slots[i] = s;
			displs[i] = s * b;
		}
		t = ddt_indexed_block(n, b, displs, ddt_base(DDT_BYTE));
	} else {
		errno = ENOMEM;
	}
	free(displs);
	free(slots);
	return t;
}

/* Block lengths uniform in [1, 2b-1] (mean b), gaps uniform in [1, 2b-1],
 * ascending, until the packed size is `bytes`. */
static struct ddt_type *
make_indexed(int64_t bytes, int64_t b, uint64_t *rng)
{
	int64_t cap = bytes, n = 0, total = 0, off = 0, *bl, *displs;
	struct ddt_type *t = NULL;

	bl = malloc((size_t)cap * sizeof(*bl));
	displs = malloc((size_t)cap * sizeof(*displs));
	if (bl == NULL || displs == NULL) {
		errno = ENOMEM;
		goto out;
	}
	while (total < bytes) {
		int64_t len = 1, gap = 1;

		if (b > 1) {
			len = 1 + (int64_t)(bench_rand(rng) %
					    (uint64_t)(2 * b - 1));
			gap = 1 + (int64_t)(bench_rand(rng) %
					    (uint64_t)(2 * b - 1));
		}
		if (len > bytes - total)
			len = bytes - total;
		bl[n] = len;
		displs[n] = off;
		n++;
		total += len;
		off += len + gap;
	}
	t = ddt_indexed(n, bl, displs, ddt_base(DDT_BYTE));
out:
	free(displs);
	free(bl);
	return t;
}

/* ---- one measurement ---------------------------------------------------- */

struct ddt_bufs {
	int64_t msg;          /* packed bytes */
	int64_t lo, span;     /* touched bytes: [lo, lo + span) from origin */
	char *typed;          /* source of pack, byte 0 = lowest touched */
	char *packed;         /* reference packed stream */
	char *out_ddt;        /* pack output, or unpack target (span) */
	char *out_mpi;
	char *ref;            /* expected result for --verify */
};

static char *
origin(char *span_buf, const struct ddt_bufs *b)
{
	return (char *)((uintptr_t)span_buf - (uintptr_t)b->lo);
}

static void
bufs_free(struct ddt_bufs *b)
{
	bench_free(b->typed);
	bench_free(b->packed);
	bench_free(b->out_ddt);
	bench_free(b->out_mpi);
	bench_free(b->ref);
}

static int
bufs_init(struct ddt_bufs *b, const struct ddt_type *t, int64_t count,
	  int with_mpi, uint64_t *rng)
{
	int64_t ext = ddt_extent(t), tlb = ddt_true_lb(t);
	int64_t tub = tlb + ddt_true_extent(t), shift = (count - 1) * ext;
	int64_t big;

	memset(b, 0, sizeof(*b));
	b->msg = ddt_size(t) * count;
	b->lo = tlb + (shift < 0 ? shift : 0);
	b->span = tub + (shift > 0 ? shift : 0) - b->lo;
	big = b->span > b->msg ? b->span : b->msg;
	b->typed = bench_alloc((size_t)b->span);
	b->packed = bench_alloc((size_t)b->msg);
	b->out_ddt = bench_alloc((size_t)big);
	b->out_mpi = with_mpi ? bench_alloc((size_t)big) : NULL;
	b->ref = bench_alloc((size_t)big);
	if (b->typed == NULL || b->packed == NULL || b->out_ddt == NULL ||
	    b->ref == NULL || (with_mpi && b->out_mpi == NULL)) {
		bufs_free(b);
		return -ENOMEM;
	}
	for (int64_t i = 0; i < b->span; i += 8) {
		uint64_t r = bench_rand(rng);

		memcpy(b->typed + i, &r, b->span - i < 8 ? (size_t)(b->span - i)
							  : 8);
	}
	return 0;
}

/* --cold: every buffer of the case out of the caches. */
static void
bufs_evict(const struct ddt_bufs *b, const struct bench_copy *cp)
{
	int64_t big = b->span > b->msg ? b->span : b->msg;

	bench_cache_evict(b->typed, (size_t)b->span);
	bench_cache_evict(b->packed, (size_t)b->msg);
	bench_cache_evict(b->out_ddt, (size_t)big);
	if (b->out_mpi != NULL)
		bench_cache_evict(b->out_mpi, (size_t)big);
	bench_cache_evict(cp->src, cp->len);
	bench_cache_evict(cp->dst, cp->len);
}

/* The reference: the flattened block list, copied one block at a time. */
static int
reference(const struct ddt_type *t, int64_t count, struct ddt_bufs *b,
	  int unpack)
{
	int64_t n = ddt_flatten(t, count, NULL, 0), pos = 0;
	struct ddt_iov *iov;

	if (n < 0)
		return (int)n;
	iov = malloc((size_t)(n > 0 ? n : 1) * sizeof(*iov));
	if (iov == NULL)
		return -ENOMEM;
	if (ddt_flatten(t, count, iov, n) != n) {
		free(iov);
		return -EIO;
	}
	if (unpack)
		memset(b->ref, 0xa5, (size_t)b->span);
	for (int64_t i = 0; i < n; i++) {
		char *typed = origin(unpack ? b->ref : b->typed, b) + iov[i].off;

		if (unpack)
			memcpy(typed, b->packed + pos, (size_t)iov[i].len);
		else
			memcpy(b->ref + pos, typed, (size_t)iov[i].len);
		pos += iov[i].len;
	}
	free(iov);
	return pos == b->msg ? 0 : -EIO;
}

static int64_t
first_diff(const char *a, const char *b, int64_t len)
{
	for (int64_t i = 0; i < len; i++)
		if (a[i] != b[i])
			return i;
	return -1;
}

struct ddt_row {
	double ddt_s, mpi_s, copy_s; /* best times; mpi_s < 0: no MPI */
	int verified;                /* 1 ok, 0 mismatch, -1 not checked */
};

enum method { M_DDT, M_MPI, M_COPY };

/* One timed run of a method. @return seconds, or < 0 on failure */
static double
time_once(enum method m, const struct ddt_case *c, struct ddt_bufs *b,
	  struct bench_copy *cp, int unpack, void *mtype)
{
	double t0, t1;
	int rc = 0;

	if (m == M_COPY)
		return bench_copy_once(cp);
	t0 = bench_now();
	if (m == M_DDT && unpack)
		rc = ddt_unpack(c->t, c->count, b->packed, origin(b->out_ddt, b));
	else if (m == M_DDT)
		rc = ddt_pack(c->t, c->count, origin(b->typed, b), b->out_ddt);
#ifdef SPINNIC_HAVE_MPI
	else if (unpack) {
		int pos = 0;

		rc = MPI_Unpack(b->packed, (int)b->msg, &pos,
				origin(b->out_mpi, b), (int)c->count,
				*(MPI_Datatype *)mtype, MPI_COMM_WORLD);
	} else {
		int pos = 0;

		rc = MPI_Pack(origin(b->typed, b), (int)c->count,
			      *(MPI_Datatype *)mtype, b->out_mpi, (int)b->msg,
			      &pos, MPI_COMM_WORLD);
	}
#else
	(void)mtype;
#endif
	t1 = bench_now();
	if (rc != 0) {
		bench_err("%s %s failed: %s", m == M_DDT ? "ddt" : "MPI",
			  unpack ? "unpack" : "pack",
			  m == M_DDT ? ddt_strerror(rc) : "MPI error");
		return -1;
	}
	return t1 - t0;
}

/* Best of reps of each method, each method's runs back to back (its own
 * buffers warm, after an untimed warm-up), or with --cold every run after
 * the caches were flushed. */
static int
run_op(const struct bench_opts *o, const struct ddt_case *c,
       struct ddt_bufs *b, struct bench_copy *cp, int unpack, void *mtype,
       struct ddt_row *row)
{
	double *best[3] = { &row->ddt_s, &row->mpi_s, &row->copy_s };
	int64_t len = unpack ? b->span : b->msg, at;
	int rc;

	row->ddt_s = row->copy_s = 0;
	row->mpi_s = -1;
	row->verified = -1;
	for (int m = M_DDT; m <= M_COPY; m++) {
		if (m == M_MPI && mtype == NULL)
			continue;
		for (int r = o->cold ? 0 : -1; r < o->reps; r++) {
			double t;

			if (o->cold)
				bufs_evict(b, cp);
			t = time_once((enum method)m, c, b, cp, unpack, mtype);
			if (t < 0)
				return -EIO;
			if (r == 0 || (r > 0 && t < *best[m]))
				*best[m] = t;
		}
	}
	if (!o->verify)
		return 0;

	/* Verify on fresh targets: every byte of the span (unpack) or of the
	 * stream (pack) against the flattened reference and MPI. */
	rc = reference(c->t, c->count, b, unpack);
	if (rc < 0) {
		bench_err("reference %s failed: %s", unpack ? "unpack" : "pack",
			  ddt_strerror(rc));
		return rc;
	}
	row->verified = 1;
	memset(b->out_ddt, 0xa5, (size_t)len);
	if (unpack)
		rc = ddt_unpack(c->t, c->count, b->packed,
				origin(b->out_ddt, b));
	else
		rc = ddt_pack(c->t, c->count, origin(b->typed, b), b->out_ddt);
	if (rc < 0) {
		bench_err("ddt %s failed: %s", unpack ? "unpack" : "pack",
			  ddt_strerror(rc));
		return rc;
	}
	at = first_diff(b->out_ddt, b->ref, len);
	if (at >= 0) {
		bench_err("verify: ddt %s of %s (block %" PRId64 ") differs "
			  "from the reference at byte %" PRId64,
			  unpack ? "unpack" : "pack", c->label, c->block_bytes,
			  at);
		row->verified = 0;
	}
#ifdef SPINNIC_HAVE_MPI
	if (mtype != NULL) {
		MPI_Datatype *mt = mtype;
		int pos = 0;

		memset(b->out_mpi, 0xa5, (size_t)len);
		if (unpack)
			MPI_Unpack(b->packed, (int)b->msg, &pos,
				   origin(b->out_mpi, b), (int)c->count, *mt,
				   MPI_COMM_WORLD);
		else
			MPI_Pack(origin(b->typed, b), (int)c->count, *mt,
				 b->out_mpi, (int)b->msg, &pos, MPI_COMM_WORLD);
		at = first_diff(b->out_ddt, b->out_mpi, len);
		if (at >= 0) {
			bench_err("verify: ddt %s of %s (block %" PRId64 ") "
				  "differs from MPI at byte %" PRId64,
				  unpack ? "unpack" : "pack", c->label,
				  c->block_bytes, at);
			row->verified = 0;
		}
	}
#endif
	return 0;
}

static int
run_case(const struct bench_opts *o, struct ddt_case *c,
	 struct bench_table *tab, uint64_t *rng, int *mismatch_p)
{
	struct bench_copy cp = { NULL, NULL, 0 };
	struct ddt_bufs b;
	void *mtype = NULL;
	int rc, with_mpi = 0;
#ifdef SPINNIC_HAVE_MPI
	MPI_Datatype mt = MPI_DATATYPE_NULL;
#endif

	rc = ddt_commit(c->t);
	if (rc < 0) {
		bench_err("commit of %s failed: %s", c->label, ddt_strerror(rc));
		return rc;
	}
	if (ddt_size(c->t) * c->count == 0) {
		bench_err("%s: the type holds no data", c->label);
		return -EINVAL;
	}
#ifdef SPINNIC_HAVE_MPI
	if (ddt_size(c->t) * c->count <= INT32_MAX && c->count <= INT32_MAX) {
		rc = ddt_mpi_type(c->t, DDT_MPI_MATCH_BOUNDS, &mt, NULL);
		if (rc == 0) {
			mtype = &mt;
			with_mpi = 1;
		} else {
			bench_err("%s: no MPI equivalent (%s); MPI column left "
				  "empty", c->label, ddt_strerror(rc));
		}
	}
#endif
	rc = bufs_init(&b, c->t, c->count, with_mpi, rng);
	if (rc < 0)
		goto out_mpi;
	rc = bench_copy_init(&cp, (size_t)b.msg);
	if (rc < 0)
		goto out_bufs;
	cp.cold = o->cold;
	/* The packed input of unpack: a pack of the random typed data. */
	rc = ddt_pack(c->t, c->count, origin(b.typed, &b), b.packed);
	if (rc < 0) {
		bench_err("ddt_pack of %s failed: %s", c->label,
			  ddt_strerror(rc));
		goto out_copy;
	}

	for (int unpack = 0; unpack < 2; unpack++) {
		struct ddt_row row;
		double g, lim;

		rc = run_op(o, c, &b, &cp, unpack, mtype, &row);
		if (rc < 0)
			goto out_copy;
		rc = bench_table_row(tab);
		if (rc < 0)
			goto out_copy;
		g = bench_gbit_s(b.msg, row.ddt_s);
		lim = bench_gbit_s(b.msg, row.copy_s);
		bench_table_set_str(tab, "op", unpack ? "unpack" : "pack");
		bench_table_set_str(tab, "type", c->label);
		bench_table_set_int(tab, "block_bytes", c->block_bytes);
		bench_table_set_int(tab, "bytes", b.msg);
		bench_table_set_num(tab, "ddt_gbit_s", g);
		bench_table_set_num(tab, "limit_gbit_s", lim);
		bench_table_set_num(tab, "ratio", lim > 0 ? g / lim : 0);
#ifdef SPINNIC_HAVE_MPI
		if (row.mpi_s > 0) {
			double m = bench_gbit_s(b.msg, row.mpi_s);

			bench_table_set_num(tab, "mpi_gbit_s", m);
			bench_table_set_num(tab, "ddt_vs_mpi", g / m);
		}
#endif
		if (o->verify)
			bench_table_set_str(tab, "verify",
					    row.verified ? "ok" : "FAIL");
		if (row.verified == 0)
			*mismatch_p = 1;
	}
	rc = 0;
out_copy:
	bench_copy_fini(&cp);
out_bufs:
	bufs_free(&b);
out_mpi:
#ifdef SPINNIC_HAVE_MPI
	ddt_mpi_type_free(&mt);
#endif
	return rc;
}

static int
make_case(enum layout l, int64_t bytes, int64_t b, uint64_t *rng,
	  struct ddt_case *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->label, sizeof(c->label), "%s", layout_names[l]);
	c->block_bytes = b;
	c->count = 1;
	switch (l) {
	case L_VECTOR:
		c->t = make_vector(bytes, b);
		break;
	case L_INDEXED_BLOCK:
		c->t = make_indexed_block(bytes, b, rng);
		break;
	default:
		c->t = make_indexed(bytes, b, rng);
		break;
	}
	if (c->t == NULL) {
		bench_err("cannot build %s with %" PRId64 " B blocks: %s",
			  c->label, b, ddt_strerror(errno));
		return -ENOMEM;
	}
	return 0;
}

static int
make_expr_case(const char *expr, int64_t bytes, struct ddt_case *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->label, sizeof(c->label), "%s", expr);
	return bench_type_from_expr(expr, bytes, &c->t, &c->count,
				    &c->block_bytes);
}

static int
ddt_run(const struct bench_opts *o)
{
	struct bench_col cols[16];
	struct bench_table *tab;
	int64_t bytes = o->bytes ? o->bytes : DDT_BYTES_DEFAULT;
	uint64_t rng = o->seed;
	int n = 0, rc = 0, mismatch = 0;
	struct ddt_case c;

	cols[n++] = (struct bench_col){ "op", BENCH_COL_STR, 0 };
	cols[n++] = (struct bench_col){ "type", BENCH_COL_STR, 0 };
	cols[n++] = (struct bench_col){ "block_bytes", BENCH_COL_INT, 0 };
	cols[n++] = (struct bench_col){ "bytes", BENCH_COL_INT, 0 };
	cols[n++] = (struct bench_col){ "ddt_gbit_s", BENCH_COL_NUM, 2 };
#ifdef SPINNIC_HAVE_MPI
	cols[n++] = (struct bench_col){ "mpi_gbit_s", BENCH_COL_NUM, 2 };
#endif
	cols[n++] = (struct bench_col){ "limit_gbit_s", BENCH_COL_NUM, 2 };
	cols[n++] = (struct bench_col){ "ratio", BENCH_COL_NUM, 3 };
#ifdef SPINNIC_HAVE_MPI
	cols[n++] = (struct bench_col){ "ddt_vs_mpi", BENCH_COL_NUM, 3 };
	if (ddt_mpi_init() < 0)
		return -EIO;
#endif
	if (o->verify)
		cols[n++] = (struct bench_col){ "verify", BENCH_COL_STR, 0 };
	tab = bench_table_create(cols, n);
	if (tab == NULL)
		return -ENOMEM;

	if (o->type != NULL) {
		rc = make_expr_case(o->type, bytes, &c);
		if (rc == 0)
			rc = run_case(o, &c, tab, &rng, &mismatch);
		ddt_free(c.t);
	}
	for (int l = 0; o->type == NULL && rc == 0 && l < L_COUNT; l++) {
		if (!(cfg.layouts & (1u << l)))
			continue;
		for (int64_t b = cfg.block_min; rc == 0 && b <= cfg.block_max;
		     b *= 2) {
			if (b > bytes)
				break;
			rc = make_case((enum layout)l, bytes, b, &rng, &c);
			if (rc == 0)
				rc = run_case(o, &c, tab, &rng, &mismatch);
			ddt_free(c.t);
		}
	}
	if (rc == 0)
		rc = bench_table_emit(tab, o);
	bench_table_free(tab);
	return bench_run_status(rc, mismatch);
}

const struct bench_cmd bench_ddt_cmd = {
	.name = "ddt",
	.summary = "host pack/unpack of lib/ddt vs the system MPI and the "
		   "streaming-copy limit",
	.opts = ddt_opts,
	.opt = ddt_opt,
	.run = ddt_run,
};
