/* SPDX-License-Identifier: BSD-3-Clause */
/* spinnic-bench: timing, the streaming-copy limit, the result table. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "ddt.h"
#include "ddt_internal.h" /* ddt_prog_recip */
#include "spin_internal.h" /* spin_pool_fifo */

void
bench_err(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("spinnic-bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

uint32_t
bench_time_every(void)
{
	const char *e = getenv("SPINNIC_BENCH_TIME_EVERY");
	unsigned long v;
	char *end;

	if (e == NULL || *e == '\0')
		return BENCH_TIME_EVERY;
	errno = 0;
	v = strtoul(e, &end, 10);
	if (errno != 0 || *end != '\0' || v > (1ul << 20)) {
		bench_err("SPINNIC_BENCH_TIME_EVERY=%s: not 0 to 2^20, using %u",
			  e, BENCH_TIME_EVERY);
		return BENCH_TIME_EVERY;
	}
	return (uint32_t)v;
}

uint64_t
bench_budget_ns(void)
{
	const char *e = getenv("SPINNIC_BENCH_BUDGET_NS");
	unsigned long long v;
	char *end;

	if (e == NULL || *e == '\0')
		return 0;
	errno = 0;
	v = strtoull(e, &end, 10);
	if (errno != 0 || *end != '\0') {
		bench_err("SPINNIC_BENCH_BUDGET_NS=%s: not a number, using 0",
			  e);
		return 0;
	}
	return v;
}

void
bench_ddt_recip_env(void)
{
	const char *e = getenv("SPINNIC_BENCH_DDT_RECIP");

	if (e != NULL && strcmp(e, "0") == 0)
		ddt_prog_recip = false;
	e = getenv("SPINNIC_BENCH_POOL_FIFO");
	if (e != NULL && strcmp(e, "1") == 0)
		spin_pool_fifo = true;
}

/* ---- timing ------------------------------------------------------------ */

double
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double
bench_gbit_s(int64_t bytes, double seconds)
{
	if (seconds <= 0)
		return 0;
	return (double)bytes * 8 / seconds / 1e9;
}

double
bench_best(const double *t, int n)
{
	double best = t[0];

	for (int i = 1; i < n; i++)
		if (t[i] < best)
			best = t[i];
	return best;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double
bench_median(double *t, int n)
{
	qsort(t, (size_t)n, sizeof(*t), cmp_double);
	if (n % 2)
		return t[n / 2];
	return (t[n / 2 - 1] + t[n / 2]) / 2;
}

void *
bench_alloc(size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t alen = (len + page - 1) / page * page;
	void *p;

	if (alen == 0)
		alen = page;
	p = aligned_alloc(page, alen);
	if (p == NULL) {
		bench_err("cannot allocate %zu bytes", len);
		return NULL;
	}
	/* Fault every page in now, not inside a timed region. */
	memset(p, 0x5a, alen);
	return p;
}

void
bench_free(void *p)
{
	free(p);
}

void
bench_cache_evict(const void *p, size_t len)
{
#if defined(__x86_64__) || defined(__i386__)
	const char *c = (const char *)((uintptr_t)p & ~(uintptr_t)63);
	const char *end = (const char *)p + len;

	for (; c < end; c += 64)
		__builtin_ia32_clflush(c);
	__builtin_ia32_mfence();
#else
	/* No portable per-line flush: overwrite a buffer bigger than any
	 * last-level cache this runs on. */
	static char *buf;
	const size_t blen = 512u << 20;

	(void)p;
	(void)len;
	if (buf == NULL && (buf = bench_alloc(blen)) == NULL)
		return;
	memset(buf, (int)(bench_now() * 1e6) & 0xff, blen);
	__asm__ volatile("" : : "r"(buf) : "memory");
#endif
}

uint64_t
bench_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* ---- streaming-copy limit ---------------------------------------------- */

int
bench_copy_init(struct bench_copy *c, size_t len)
{
	c->len = len;
	c->cold = 0;
	c->src = bench_alloc(len);
	c->dst = bench_alloc(len);
	if (c->src == NULL || c->dst == NULL) {
		bench_copy_fini(c);
		return -ENOMEM;
	}
	return 0;
}

/* glibc's memcpy switches to non-temporal stores above a size threshold,
 * which is slower while the data is cache-resident and faster when it is
 * not; a copy in pieces below the threshold is the other way round. The
 * limit is the faster of the two. */
#define COPY_PIECE (256u << 10)

double
bench_copy_once(struct bench_copy *c)
{
	double t0, t1, whole, pieces;

	t0 = bench_now();
	memcpy(c->dst, c->src, c->len);
	t1 = bench_now();
	whole = t1 - t0;
	__asm__ volatile("" : : "r"(c->dst) : "memory");
	if (c->len <= COPY_PIECE)
		return whole;
	if (c->cold) {
		/* the first variant left both buffers in the caches */
		bench_cache_evict(c->src, c->len);
		bench_cache_evict(c->dst, c->len);
	}
	t0 = bench_now();
	for (size_t off = 0; off < c->len; off += COPY_PIECE)
		memcpy((char *)c->dst + off, (const char *)c->src + off,
		       c->len - off < COPY_PIECE ? c->len - off : COPY_PIECE);
	t1 = bench_now();
	/* Keep the copies observable so they are never elided. */
	__asm__ volatile("" : : "r"(c->dst) : "memory");
	pieces = t1 - t0;
	return whole < pieces ? whole : pieces;
}

void
bench_copy_fini(struct bench_copy *c)
{
	bench_free(c->src);
	bench_free(c->dst);
	c->src = NULL;
	c->dst = NULL;
}

double
bench_copy_limit(size_t len, int reps)
{
	return bench_copy_limit_cold(len, reps, 0);
}

double
bench_copy_limit_cold(size_t len, int reps, int cold)
{
	struct bench_copy c;
	double best = 0;

	if (bench_copy_init(&c, len) < 0)
		return -1;
	c.cold = cold;
	/* warm: one untimed copy first; cold: both buffers evicted before
	 * every timed one */
	for (int r = cold ? 0 : -1; r < reps; r++) {
		double t;

		if (cold) {
			bench_cache_evict(c.src, c.len);
			bench_cache_evict(c.dst, c.len);
		}
		t = bench_copy_once(&c);
		if (r == 0 || (r > 0 && t < best))
			best = t;
	}
	bench_copy_fini(&c);
	return bench_gbit_s((int64_t)len, best);
}

/* ---- result table ------------------------------------------------------ */

#define CELL_MAX 64

struct bench_table {
	struct bench_col *cols;
	int ncols;
	char (*cells)[CELL_MAX]; /* nrows * ncols; "" = unset */
	size_t nrows, cap;
};

struct bench_table *
bench_table_create(const struct bench_col *cols, int ncols)
{
	struct bench_table *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->cols = calloc((size_t)ncols, sizeof(*cols));
	if (t->cols == NULL) {
		free(t);
		return NULL;
	}
	memcpy(t->cols, cols, (size_t)ncols * sizeof(*cols));
	t->ncols = ncols;
	return t;
}

int
bench_table_row(struct bench_table *t)
{
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 32;
		void *c = realloc(t->cells,
				  cap * (size_t)t->ncols * CELL_MAX);

		if (c == NULL)
			return -ENOMEM;
		t->cells = c;
		t->cap = cap;
	}
	memset((char *)t->cells + t->nrows * (size_t)t->ncols * CELL_MAX, 0,
	       (size_t)t->ncols * CELL_MAX);
	t->nrows++;
	return 0;
}

static char *
cell(struct bench_table *t, const char *col, enum bench_col_kind kind)
{
	for (int i = 0; i < t->ncols; i++) {
		if (strcmp(t->cols[i].name, col) != 0)
			continue;
		if (t->nrows == 0 || t->cols[i].kind != kind)
			break;
		return t->cells[(t->nrows - 1) * (size_t)t->ncols +
				(size_t)i];
	}
	fprintf(stderr, "spinnic-bench: internal error: column '%s'\n", col);
	abort();
}

void
bench_table_set_str(struct bench_table *t, const char *col, const char *v)
{
	char *c = cell(t, col, BENCH_COL_STR);

	snprintf(c, CELL_MAX, "%s", v);
}

void
bench_table_set_int(struct bench_table *t, const char *col, int64_t v)
{
	snprintf(cell(t, col, BENCH_COL_INT), CELL_MAX, "%lld",
		 (long long)v);
}

void
bench_table_set_num(struct bench_table *t, const char *col, double v)
{
	int i;

	for (i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i].name, col) == 0)
			break;
	snprintf(cell(t, col, BENCH_COL_NUM), CELL_MAX, "%.*f",
		 i < t->ncols ? t->cols[i].prec : 3, v);
}

static const char *
cell_at(const struct bench_table *t, size_t row, int col)
{
	return t->cells[row * (size_t)t->ncols + (size_t)col];
}

void
bench_table_print(const struct bench_table *t, FILE *f)
{
	int w[t->ncols];

	for (int c = 0; c < t->ncols; c++) {
		w[c] = (int)strlen(t->cols[c].name);
		for (size_t r = 0; r < t->nrows; r++) {
			int l = (int)strlen(cell_at(t, r, c));

			if (l > w[c])
				w[c] = l;
		}
	}
	for (int c = 0; c < t->ncols; c++)
		fprintf(f, "%s%*s", c ? "  " : "",
			t->cols[c].kind == BENCH_COL_STR ? -w[c] : w[c],
			t->cols[c].name);
	fputc('\n', f);
	for (size_t r = 0; r < t->nrows; r++) {
		for (int c = 0; c < t->ncols; c++) {
			const char *v = cell_at(t, r, c);

			fprintf(f, "%s%*s", c ? "  " : "",
				t->cols[c].kind == BENCH_COL_STR ? -w[c] : w[c],
				*v ? v : "-");
		}
		fputc('\n', f);
	}
}

/* RFC 4180 quoting for cells that need it (type expressions have commas). */
static void
csv_cell(FILE *f, const char *v)
{
	if (strpbrk(v, ",\"\n") == NULL) {
		fputs(v, f);
		return;
	}
	fputc('"', f);
	for (; *v; v++) {
		if (*v == '"')
			fputc('"', f);
		fputc(*v, f);
	}
	fputc('"', f);
}

int
bench_table_write_csv(const struct bench_table *t, const char *path)
{
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		int err = errno;

		bench_err("cannot create '%s': %s", path, strerror(err));
		return -err;
	}
	for (int c = 0; c < t->ncols; c++) {
		if (c)
			fputc(',', f);
		csv_cell(f, t->cols[c].name);
	}
	fputc('\n', f);
	for (size_t r = 0; r < t->nrows; r++) {
		for (int c = 0; c < t->ncols; c++) {
			if (c)
				fputc(',', f);
			csv_cell(f, cell_at(t, r, c));
		}
		fputc('\n', f);
	}
	if (ferror(f) | (fclose(f) != 0)) {
		int err = errno ? errno : EIO;

		bench_err("cannot write '%s': %s", path, strerror(err));
		return -err;
	}
	return 0;
}

int
bench_csv_check(const char *path)
{
	struct stat st;
	int fd, err;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		bench_err("--csv '%s': is a directory", path);
		return -EISDIR;
	}
	/* an existing file is opened, not truncated (a FIFO without a
	 * reader yet is fine); a missing one is created and removed */
	fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0)
			unlink(path);
	}
	if (fd < 0 && errno != ENXIO) {
		err = errno;
		bench_err("--csv '%s': cannot write it: %s", path,
			  strerror(err));
		return -err;
	}
	if (fd >= 0)
		close(fd);
	return 0;
}

int
bench_table_emit(const struct bench_table *t, const struct bench_opts *o)
{
	bench_table_print(t, stdout);
	fflush(stdout);
	if (o->csv != NULL)
		return bench_table_write_csv(t, o->csv);
	return 0;
}

void
bench_table_free(struct bench_table *t)
{
	if (t == NULL)
		return;
	free(t->cells);
	free(t->cols);
	free(t);
}

int64_t
bench_span_bytes(const struct ddt_type *t, int64_t count)
{
	int64_t ext = ddt_extent(t), shift = (count - 1) * ext;

	return ddt_true_extent(t) + (shift < 0 ? -shift : shift);
}

int
bench_type_from_expr(const char *expr, int64_t bytes, struct ddt_type **t_p,
		     int64_t *count_p, int64_t *block_bytes_p)
{
	const char *err = NULL;
	struct ddt_type *t;
	int64_t size, count, nb;
	int rc;

	*t_p = NULL;
	t = ddt_parse(expr, &err);
	if (t == NULL) {
		bench_err("bad --type: %s", err ? err : ddt_strerror(errno));
		return -EINVAL;
	}
	rc = ddt_commit(t);
	if (rc < 0) {
		bench_err("cannot commit --type: %s", ddt_strerror(rc));
		goto fail;
	}
	size = ddt_size(t);
	if (size <= 0) {
		bench_err("bad --type: the type holds no data");
		rc = -EINVAL;
		goto fail;
	}
	/* fewer elements when their span would be huge (a matrix column
	 * repeated spans rows x columns) */
	count = bytes / size > 0 ? bytes / size : 1;
	while (count > 1 && bench_span_bytes(t, count) > BENCH_SPAN_MAX)
		count /= 2;
	if (bench_span_bytes(t, count) > BENCH_SPAN_MAX) {
		bench_err("bad --type: one element spans more than %lld bytes",
			  BENCH_SPAN_MAX);
		rc = -EINVAL;
		goto fail;
	}
	nb = ddt_count_blocks(t, count);
	*block_bytes_p = nb > 0 ? size * count / nb : 0;
	*count_p = count;
	*t_p = t;
	return 0;
fail:
	ddt_free(t);
	return rc;
}

int
bench_run_status(int rc, int mismatch)
{
	if (rc < 0)
		return rc;
	if (mismatch) {
		bench_err("verify: mismatches found (see above)");
		return 1;
	}
	return 0;
}

int
bench_opt_num(const char *name, const char *arg,
	      const struct bench_num_opt *t, size_t n)
{
	long long v;
	char tail;
	size_t i;

	for (i = 0; i < n; i++) {
		if (strcmp(name, t[i].name) != 0)
			continue;
		if (sscanf(arg, "%lld%c", &v, &tail) != 1 || v < t[i].min ||
		    v > t[i].max) {
			bench_err("bad --%s '%s': expected %ld..%ld", name, arg,
				  t[i].min, t[i].max);
			return -EINVAL;
		}
		*t[i].v = (long)v;
		return 0;
	}
	return -ENOENT;
}

int
bench_io_all(int fd, void *buf, size_t len, bool wr)
{
	char *b = buf;

	while (len > 0) {
		ssize_t k = wr ? write(fd, b, len) : read(fd, b, len);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -EIO;
		b += k;
		len -= (size_t)k;
	}
	return 0;
}

int
bench_in_child(int (*fn)(double *out, void *arg), void *arg, double *out,
	       size_t n, const char *what)
{
	int pfd[2], st, rc;
	pid_t child;

	if (pipe(pfd) != 0)
		return -errno;
	fflush(NULL);
	child = fork();
	if (child < 0) {
		rc = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return rc;
	}
	if (child == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pfd[0]);
		rc = fn(out, arg);
		if (rc == 0 && write(pfd[1], out, n * sizeof(double)) !=
		    (ssize_t)(n * sizeof(double)))
			rc = -EIO;
		_exit(rc == 0 ? 0 : 1);
	}
	close(pfd[1]);
	rc = bench_io_all(pfd[0], out, n * sizeof(double), false);
	close(pfd[0]);
	if (rc < 0)
		kill(child, SIGKILL);
	if (waitpid(child, &st, 0) != child || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		if (rc == 0)
			bench_err("%s failed (status 0x%x)", what, st);
		rc = -EIO;
	}
	return rc;
}
