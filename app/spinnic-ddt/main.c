/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-ddt: inspect, flatten, pack and unpack MPI-style derived datatypes
 * given as type expressions (DESIGN §7, contract in §9).
 *
 * Typed-side files hold the span the count elements touch: byte 0 of the file
 * is the lowest byte touched, its length reaches the highest byte touched.
 * Packed-side files hold the packed stream (size * count bytes), or with
 * unpack --range only the bytes of that range.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ddt.h>

#define PROG "spinnic-ddt"

static const char usage_text[] =
	"usage: " PROG " COMMAND EXPR [options]\n"
	"\n"
	"commands:\n"
	"  info EXPR                 size, extent, lb, ub, true lb/extent, blocks,\n"
	"                            depth and layout class of one element\n"
	"  flatten EXPR [--count N]  merged blocks of N elements in packing order,\n"
	"                            one 'offset length' per line (offsets from the\n"
	"                            buffer origin)\n"
	"  pack EXPR --count N --in TYPED --out PACKED\n"
	"  unpack EXPR --count N --in PACKED --out TYPED [--range FIRST:LAST]\n"
	"                            with --range only packed bytes [FIRST, LAST)\n"
	"                            are placed, as a packet handler would; PACKED\n"
	"                            then holds either the whole stream or exactly\n"
	"                            those LAST-FIRST bytes\n"
	"\n"
	"TYPED files hold the span the N elements touch: byte 0 is the lowest byte\n"
	"touched, the length reaches the highest. unpack creates a missing --out\n"
	"zero-filled at that length and writes only the bytes it places.\n"
	"\n"
	"options:\n"
	"  -c, --count N   number of elements (default 1)\n"
	"  -i, --in F      input file\n"
	"  -o, --out F     output file\n"
	"  -r, --range A:B packed-stream byte range (unpack only)\n"
	"  -h, --help      this text\n"
	"\n"
	"EXPR examples: 'vector(1024,1,1024)[double]',\n"
	"  'struct(1,2;0,8)[int32,double]', 'subarray(8,8;4,4;2,2;C)[float]'\n";

/* The type being worked on, released by die() too. */
static struct ddt_type *cur_type;

/* One line on stderr, then a non-zero exit: the tool's only error path. */
static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	ddt_free(cur_type);

	fflush(stdout);
	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

enum cmd { CMD_INFO, CMD_FLATTEN, CMD_PACK, CMD_UNPACK };

struct cmd_desc {
	const char *name;
	enum cmd cmd;
	unsigned int allowed; /* OPT_* bits valid for the command */
	unsigned int required;
};

#define OPT_COUNT (1u << 0)
#define OPT_IN (1u << 1)
#define OPT_OUT (1u << 2)
#define OPT_RANGE (1u << 3)

static const struct cmd_desc cmd_descs[] = {
	{ "info", CMD_INFO, 0, 0 },
	{ "flatten", CMD_FLATTEN, OPT_COUNT, 0 },
	{ "pack", CMD_PACK, OPT_COUNT | OPT_IN | OPT_OUT, OPT_IN | OPT_OUT },
	{ "unpack", CMD_UNPACK, OPT_COUNT | OPT_IN | OPT_OUT | OPT_RANGE,
	  OPT_IN | OPT_OUT },
};

struct args {
	const struct cmd_desc *cmd;
	const char *expr;
	int64_t count;
	const char *in;
	const char *out;
	int has_range;
	int64_t first, last;
	unsigned int given;
};

static const char *
opt_name(unsigned int bit)
{
	switch (bit) {
	case OPT_COUNT: return "--count";
	case OPT_IN: return "--in";
	case OPT_OUT: return "--out";
	default: return "--range";
	}
}

/* Whole-string decimal int64, no trailing junk (no octal surprises). */
static int
parse_i64(const char *s, int64_t *v_p)
{
	char *end;
	long long v;

	if (*s == '\0' || *s == ' ' || *s == '\t')
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0)
		return -ERANGE;
	if (*end != '\0')
		return -EINVAL;
	*v_p = v;
	return 0;
}

static void
parse_range(const char *s, struct args *a)
{
	const char *colon = strchr(s, ':');
	char first[32];
	size_t n;

	if (colon == NULL)
		die("bad --range '%s': expected FIRST:LAST", s);
	n = (size_t)(colon - s);
	if (n == 0 || n >= sizeof(first))
		die("bad --range '%s': expected FIRST:LAST", s);
	memcpy(first, s, n);
	first[n] = '\0';
	if (parse_i64(first, &a->first) < 0 ||
	    parse_i64(colon + 1, &a->last) < 0)
		die("bad --range '%s': FIRST and LAST must be integers", s);
	if (a->first < 0 || a->last < a->first)
		die("bad --range '%s': need 0 <= FIRST <= LAST", s);
	a->has_range = 1;
}

static void
parse_args(int argc, char **argv, struct args *a)
{
	static const struct option longopts[] = {
		{ "count", required_argument, NULL, 'c' },
		{ "in", required_argument, NULL, 'i' },
		{ "out", required_argument, NULL, 'o' },
		{ "range", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd;
	size_t i;
	int c;

	memset(a, 0, sizeof(*a));
	a->count = 1;
	if (argc < 2)
		die("missing command (info, flatten, pack, unpack); try --help");
	cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
	    strcmp(cmd, "help") == 0) {
		fputs(usage_text, stdout);
		exit(0);
	}
	for (i = 0; i < sizeof(cmd_descs) / sizeof(cmd_descs[0]); i++)
		if (strcmp(cmd, cmd_descs[i].name) == 0)
			a->cmd = &cmd_descs[i];
	if (a->cmd == NULL)
		die("unknown command '%s' (info, flatten, pack, unpack)", cmd);

	/* getopt's own messages would be a second, differently worded line. */
	opterr = 0;
	optind = 2;
	while ((c = getopt_long(argc, argv, ":c:i:o:r:h", longopts,
				NULL)) != -1) {
		unsigned int bit = 0;

		switch (c) {
		case 'c':
			bit = OPT_COUNT;
			if (parse_i64(optarg, &a->count) < 0)
				die("bad --count '%s': not an integer", optarg);
			if (a->count < 0)
				die("bad --count '%s': must be >= 0", optarg);
			break;
		case 'i':
			bit = OPT_IN;
			a->in = optarg;
			break;
		case 'o':
			bit = OPT_OUT;
			a->out = optarg;
			break;
		case 'r':
			bit = OPT_RANGE;
			parse_range(optarg, a);
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case ':':
			die("option '%s' needs an argument", argv[optind - 1]);
		default:
			die("unknown option '%s'", argv[optind - 1]);
		}
		if (!(a->cmd->allowed & bit))
			die("option %s is not valid for '%s'", opt_name(bit),
			    a->cmd->name);
		a->given |= bit;
	}
	if (optind >= argc)
		die("missing type expression after '%s'", a->cmd->name);
	a->expr = argv[optind++];
	if (optind < argc)
		die("unexpected argument '%s'", argv[optind]);
	for (unsigned int bit = 1; bit <= OPT_RANGE; bit <<= 1)
		if ((a->cmd->required & bit) && !(a->given & bit))
			die("'%s' needs %s", a->cmd->name, opt_name(bit));
}

static struct ddt_type *
type_parse(const char *expr)
{
	const char *err = NULL;
	struct ddt_type *t;
	int rc;

	t = ddt_parse(expr, &err);
	if (t == NULL) {
		if (err != NULL)
			die("bad type expression: %s", err);
		die("bad type expression: %s", ddt_strerror(errno));
	}
	cur_type = t;
	rc = ddt_commit(t);
	if (rc < 0)
		die("cannot commit type: %s", ddt_strerror(rc));
	return t;
}

/* ---- the span the count elements touch --------------------------------- */

struct span {
	int64_t lo, hi; /* [lo, hi) from the origin; lo == hi when empty */
	int64_t blocks;
};

static int
span_block(void *arg, int64_t off, int64_t len, int64_t stream_off)
{
	struct span *s = arg;

	(void)stream_off;
	if (len <= 0)
		return 0;
	if (s->blocks == 0 || off < s->lo)
		s->lo = off;
	if (s->blocks == 0 || off + len > s->hi)
		s->hi = off + len;
	s->blocks++;
	return 0;
}

/* Packed stream length of count elements, or die on overflow. */
static int64_t
stream_len(const struct ddt_type *t, int64_t count)
{
	int64_t size = ddt_size(t), len;

	if (__builtin_mul_overflow(size, count, &len))
		die("size %" PRId64 " * count %" PRId64 " overflows", size,
		    count);
	return len;
}

/* Min/max over the blocks actually placed, which is right for any count,
 * negative extents and resized types alike. */
static struct span
span_compute(const struct ddt_type *t, int64_t count)
{
	struct span s = { 0, 0, 0 };
	int64_t len = stream_len(t, count);
	struct ddt_segment *seg;
	int rc;

	if (len == 0)
		return s;
	seg = ddt_segment_create(t, count);
	if (seg == NULL)
		die("cannot create segment: %s", ddt_strerror(errno));
	rc = ddt_segment_blocks(seg, 0, len, span_block, &s);
	ddt_segment_free(seg);
	if (rc < 0)
		die("cannot walk the type: %s", ddt_strerror(rc));
	if ((uint64_t)(s.hi - s.lo) > SIZE_MAX / 2)
		die("span of %" PRId64 " bytes is too large", s.hi - s.lo);
	return s;
}

/* MPI's buf for a typed buffer whose byte 0 is the span's lowest byte: it may
 * lie outside the allocation, only touched bytes are ever used. */
static char *
origin_of(char *span_buf, const struct span *s)
{
	return (char *)((uintptr_t)span_buf - (uintptr_t)s->lo);
}

/* ---- files ------------------------------------------------------------- */

static void
write_all(int fd, const void *buf, size_t len, const char *path)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("cannot write '%s': %s", path, strerror(errno));
		p += n;
		len -= (size_t)n;
	}
}

/* Read a whole regular file; *len_p receives its size. */
static void *
read_file(const char *path, size_t *len_p)
{
	struct stat st;
	char *buf;
	size_t got = 0;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		die("cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		die("cannot stat '%s': %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		die("'%s' is not a regular file", path);
	buf = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
	if (buf == NULL)
		die("out of memory reading '%s'", path);
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("cannot read '%s': %s", path, strerror(errno));
		if (n == 0)
			die("'%s' shrank while reading", path);
		got += (size_t)n;
	}
	close(fd);
	*len_p = got;
	return buf;
}

static void
write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		die("cannot create '%s': %s", path, strerror(errno));
	write_all(fd, buf, len, path);
	if (close(fd) < 0)
		die("cannot write '%s': %s", path, strerror(errno));
}

/* ---- commands ---------------------------------------------------------- */

static int
cmd_info(const struct args *a, struct ddt_type *t)
{
	struct ddt_class_info ci;
	char buf[256];
	int n, rc;

	n = ddt_print(t, buf, sizeof(buf));
	printf("type: %s%s\n", n >= 0 ? buf : a->expr,
	       n >= (int)sizeof(buf) ? "..." : "");
	printf("size: %" PRId64 "\n", ddt_size(t));
	printf("extent: %" PRId64 "\n", ddt_extent(t));
	printf("lb: %" PRId64 "\n", ddt_lb(t));
	printf("ub: %" PRId64 "\n", ddt_ub(t));
	printf("true_lb: %" PRId64 "\n", ddt_true_lb(t));
	printf("true_extent: %" PRId64 "\n", ddt_true_extent(t));
	printf("blocks: %" PRId64 "\n", ddt_num_blocks(t));
	printf("depth: %d\n", ddt_depth(t));
	rc = ddt_classify(t, 1, &ci);
	if (rc < 0)
		die("cannot classify: %s", ddt_strerror(rc));
	printf("class: %s", ddt_class_name(ci.cls));
	switch (ci.cls) {
	case DDT_CLASS_CONTIG:
		printf(" blocklen=%" PRId64 " first_off=%" PRId64
		       " extent=%" PRId64, ci.blocklen, ci.first_off,
		       ci.extent);
		break;
	case DDT_CLASS_VECTOR:
		printf(" blocklen=%" PRId64 " stride=%" PRId64
		       " nblocks=%" PRId64 " first_off=%" PRId64
		       " extent=%" PRId64, ci.blocklen, ci.stride, ci.nblocks,
		       ci.first_off, ci.extent);
		break;
	case DDT_CLASS_INDEXED_BLOCK:
		printf(" blocklen=%" PRId64 " nblocks=%" PRId64
		       " first_off=%" PRId64 " extent=%" PRId64,
		       ci.blocklen, ci.nblocks, ci.first_off, ci.extent);
		break;
	default:
		break;
	}
	putchar('\n');
	return 0;
}

struct flatten_state {
	int64_t off, len; /* pending merged block; len 0 when none */
};

static int
flatten_block(void *arg, int64_t off, int64_t len, int64_t stream_off)
{
	struct flatten_state *f = arg;

	(void)stream_off;
	if (len <= 0)
		return 0;
	if (f->len > 0 && f->off + f->len == off) {
		f->len += len;
		return 0;
	}
	if (f->len > 0)
		printf("%" PRId64 " %" PRId64 "\n", f->off, f->len);
	f->off = off;
	f->len = len;
	return 0;
}

/* Streams the blocks so a huge count needs no block array. */
static int
cmd_flatten(const struct args *a, struct ddt_type *t)
{
	struct flatten_state f = { 0, 0 };
	int64_t len = stream_len(t, a->count);
	struct ddt_segment *seg;
	int rc;

	if (len == 0)
		return 0;
	seg = ddt_segment_create(t, a->count);
	if (seg == NULL)
		die("cannot create segment: %s", ddt_strerror(errno));
	rc = ddt_segment_blocks(seg, 0, len, flatten_block, &f);
	ddt_segment_free(seg);
	if (rc < 0)
		die("cannot walk the type: %s", ddt_strerror(rc));
	if (f.len > 0)
		printf("%" PRId64 " %" PRId64 "\n", f.off, f.len);
	return 0;
}

static int
cmd_pack(const struct args *a, struct ddt_type *t)
{
	struct span s = span_compute(t, a->count);
	int64_t len = stream_len(t, a->count);
	size_t in_len;
	char *in, *out;
	int rc;

	in = read_file(a->in, &in_len);
	if ((int64_t)in_len != s.hi - s.lo)
		die("'%s' has %zu bytes, the type spans %" PRId64, a->in,
		    in_len, s.hi - s.lo);
	if ((uint64_t)len > SIZE_MAX / 2)
		die("packed stream of %" PRId64 " bytes is too large", len);
	out = malloc(len > 0 ? (size_t)len : 1);
	if (out == NULL)
		die("out of memory for %" PRId64 " packed bytes", len);
	rc = ddt_pack(t, a->count, origin_of(in, &s), out);
	if (rc < 0)
		die("pack failed: %s", ddt_strerror(rc));
	write_file(a->out, out, (size_t)len);
	free(out);
	free(in);
	return 0;
}

/* Map --out (creating it zero-filled at the span length), shared, so that
 * only the bytes unpack places are ever modified in the file. */
static char *
map_typed_out(const char *path, size_t span)
{
	struct stat st;
	char *map;
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
	if (fd >= 0) {
		if (ftruncate(fd, (off_t)span) < 0)
			die("cannot size '%s': %s", path, strerror(errno));
	} else if (errno == EEXIST) {
		fd = open(path, O_RDWR);
		if (fd < 0)
			die("cannot open '%s': %s", path, strerror(errno));
		if (fstat(fd, &st) < 0)
			die("cannot stat '%s': %s", path, strerror(errno));
		if (!S_ISREG(st.st_mode))
			die("'%s' is not a regular file", path);
		if ((uint64_t)st.st_size != span)
			die("'%s' has %jd bytes, the type spans %zu", path,
			    (intmax_t)st.st_size, span);
	} else {
		die("cannot create '%s': %s", path, strerror(errno));
	}
	if (span == 0) {
		close(fd);
		return NULL;
	}
	map = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		die("cannot map '%s': %s", path, strerror(errno));
	close(fd);
	return map;
}

static int
cmd_unpack(const struct args *a, struct ddt_type *t)
{
	int64_t len = stream_len(t, a->count);
	int64_t first = 0, last = len;
	const char *src;
	struct ddt_segment *seg;
	struct span s;
	size_t in_len;
	char *in, *map;
	int rc;

	if (a->has_range) {
		if (a->last > len)
			die("range %" PRId64 ":%" PRId64 " outside the packed "
			    "stream of %" PRId64 " bytes", a->first, a->last,
			    len);
		first = a->first;
		last = a->last;
	}
	in = read_file(a->in, &in_len);
	if ((int64_t)in_len == last - first)
		src = in;
	else if ((int64_t)in_len == len)
		src = in + first;
	else if (a->has_range)
		die("'%s' has %zu bytes, expected the range's %" PRId64
		    " or the stream's %" PRId64, a->in, in_len, last - first,
		    len);
	else
		die("'%s' has %zu bytes, the packed stream has %" PRId64,
		    a->in, in_len, len);

	s = span_compute(t, a->count);
	map = map_typed_out(a->out, (size_t)(s.hi - s.lo));
	if (first < last && !a->has_range) {
		rc = ddt_unpack(t, a->count, src, origin_of(map, &s));
		if (rc < 0)
			die("unpack failed: %s", ddt_strerror(rc));
	} else if (first < last) {
		/* A packet handler's view: a segment placing one range. */
		seg = ddt_segment_create(t, a->count);
		if (seg == NULL)
			die("cannot create segment: %s", ddt_strerror(errno));
		rc = ddt_segment_unpack(seg, first, last, src,
					origin_of(map, &s));
		ddt_segment_free(seg);
		if (rc < 0)
			die("unpack failed: %s", ddt_strerror(rc));
	}
	if (map != NULL) {
		if (msync(map, (size_t)(s.hi - s.lo), MS_SYNC) < 0)
			die("cannot write '%s': %s", a->out, strerror(errno));
		munmap(map, (size_t)(s.hi - s.lo));
	}
	free(in);
	return 0;
}

int
main(int argc, char **argv)
{
	struct ddt_type *t;
	struct args a;
	int rc = 0;

	parse_args(argc, argv, &a);
	t = type_parse(a.expr);
	switch (a.cmd->cmd) {
	case CMD_INFO:
		rc = cmd_info(&a, t);
		break;
	case CMD_FLATTEN:
		rc = cmd_flatten(&a, t);
		break;
	case CMD_PACK:
		rc = cmd_pack(&a, t);
		break;
	case CMD_UNPACK:
		rc = cmd_unpack(&a, t);
		break;
	}
	ddt_free(t);
	cur_type = NULL;
	if (fflush(stdout) != 0 || ferror(stdout))
		die("cannot write standard output: %s", strerror(errno));
	return rc;
}
