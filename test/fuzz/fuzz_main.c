/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Driver for the fuzz targets without libFuzzer (any compiler): runs every
 * file of the corpus directories (or single files) given as arguments, then
 * N deterministic mutations of each (xorshift PRNG with a fixed seed: bit
 * flips, byte sets, interesting values, truncation, insertion, splices
 * with another corpus file). This is what `meson test --suite fuzz` runs.
 *
 *   fuzz_<target>_run [-n MUTATIONS] [-s SEED] [-t SECONDS] PATH...
 *
 * -t bounds the mutation phase in wall time (the corpus always runs).
 * Exit 0; on a failing input the target aborts (a check or a sanitizer)
 * and the input is first saved to ./fuzz-crash-<target>.bin.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef FUZZ_TARGET_NAME
#define FUZZ_TARGET_NAME "fuzz"
#endif
#define FZ_MAX_INPUT (1u << 17)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

struct input {
	uint8_t *d;
	size_t n;
	char *name;
};

static struct input *corpus;
static size_t ncorpus, capcorpus;
static uint8_t *cur;
static size_t cur_n;
static const char *cur_what = "";
static uint64_t rng;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static size_t
rnd_below(size_t n)
{
	return n == 0 ? 0 : (size_t)(rnd() % n);
}

/* on a crash: save the input that caused it, then die as before */
static void
on_abort(int sig)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "fuzz-crash-%s.bin", FUZZ_TARGET_NAME);
	f = fopen(path, "wb");
	if (f != NULL) {
		fwrite(cur, 1, cur_n, f);
		fclose(f);
		fprintf(stderr, "%s: failing input (%s, %zu bytes) saved to %s\n",
			FUZZ_TARGET_NAME, cur_what, cur_n, path);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static int
add_file(const char *path)
{
	struct input in;
	FILE *f = fopen(path, "rb");
	size_t n;

	if (f == NULL) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	in.d = malloc(FZ_MAX_INPUT);
	if (in.d == NULL) {
		fclose(f);
		return -1;
	}
	n = fread(in.d, 1, FZ_MAX_INPUT, f);
	fclose(f);
	in.n = n;
	in.name = strdup(path);
	if (ncorpus == capcorpus) {
		capcorpus = capcorpus ? 2 * capcorpus : 64;
		corpus = realloc(corpus, capcorpus * sizeof(*corpus));
		if (corpus == NULL)
			return -1;
	}
	corpus[ncorpus++] = in;
	return 0;
}

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct input *)a)->name,
		      ((const struct input *)b)->name);
}

static int
add_path(const char *path)
{
	struct stat st;
	struct dirent *de;
	DIR *d;
	char p[4096];

	if (stat(path, &st) != 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return add_file(path);
	d = opendir(path);
	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
		if (add_file(p) != 0) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

static void
run(const uint8_t *d, size_t n, const char *what)
{
	/* an exact-size copy, so reads past the input are caught by ASan */
	uint8_t *c = malloc(n ? n : 1);

	memcpy(c, d, n);
	memcpy(cur, d, n);
	cur_n = n;
	cur_what = what;
	LLVMFuzzerTestOneInput(c, n);
	free(c);
}

static const uint64_t interesting[] = {
	0, 1, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff,
	0x80000000, 0xffffffff, 0x7fffffffffffffffull, 0x8000000000000000ull,
	~0ull, 16, 64, 512, 2048, 4096, 65535, 65536,
};

/* one mutation of in into out (FZ_MAX_INPUT bytes); returns the new size */
static size_t
mutate(const struct input *in, uint8_t *out)
{
	size_t n = in->n, k, steps = 1 + rnd_below(4), at, len;

	memcpy(out, in->d, n);
	for (k = 0; k < steps; k++) {
		switch (rnd_below(8)) {
		case 0: /* bit flip */
			if (n)
				out[rnd_below(n)] ^= (uint8_t)(1u << rnd_below(8));
			break;
		case 1: /* byte set */
			if (n)
				out[rnd_below(n)] = (uint8_t)rnd();
			break;
		case 2: { /* interesting value, 1/2/4/8 bytes */
			uint64_t v = interesting[rnd_below(sizeof(interesting) /
							   sizeof(interesting[0]))];
			size_t w = (size_t)1 << rnd_below(4);

			if (n >= w) {
				at = rnd_below(n - w + 1);
				memcpy(out + at, &v, w);
			}
			break;
		}
		case 3: /* add to a byte */
			if (n)
				out[rnd_below(n)] += (uint8_t)(1 + rnd_below(16));
			break;
		case 4: /* truncate */
			n = rnd_below(n + 1);
			break;
		case 5: /* insert random bytes */
			len = 1 + rnd_below(16);
			if (n + len <= FZ_MAX_INPUT) {
				at = rnd_below(n + 1);
				memmove(out + at + len, out + at, n - at);
				for (size_t i = 0; i < len; i++)
					out[at + i] = (uint8_t)rnd();
				n += len;
			}
			break;
		case 6: { /* splice: our head, another input's tail */
			const struct input *o = &corpus[rnd_below(ncorpus)];
			size_t from = rnd_below(o->n + 1);

			at = rnd_below(n + 1);
			len = o->n - from;
			if (at + len > FZ_MAX_INPUT)
				len = FZ_MAX_INPUT - at;
			memcpy(out + at, o->d + from, len);
			n = at + len;
			break;
		}
		default: /* duplicate a chunk (repeats records) */
			if (n) {
				at = rnd_below(n);
				len = 1 + rnd_below(n - at);
				if (n + len <= FZ_MAX_INPUT) {
					memmove(out + at + len, out + at, n - at);
					n += len;
				}
			}
			break;
		}
	}
	return n;
}

int
main(int argc, char **argv)
{
	unsigned long mutations = 200;
	double seconds = 0;
	uint8_t *buf;
	size_t i, done = 0;
	struct timespec t0, t1;
	int opt;

	rng = 0x2545f4914f6cdd1dull;
	while ((opt = getopt(argc, argv, "n:s:t:")) != -1) {
		switch (opt) {
		case 'n':
			mutations = strtoul(optarg, NULL, 0);
			break;
		case 's':
			rng = strtoull(optarg, NULL, 0) | 1;
			break;
		case 't':
			seconds = strtod(optarg, NULL);
			break;
		default:
			fprintf(stderr, "usage: %s [-n MUTATIONS] [-s SEED] "
				"[-t SECONDS] PATH...\n", argv[0]);
			return 2;
		}
	}
	if (LLVMFuzzerInitialize != NULL)
		LLVMFuzzerInitialize(&argc, &argv);
	for (i = (size_t)optind; i < (size_t)argc; i++)
		if (add_path(argv[i]) != 0)
			return 1;
	if (ncorpus == 0) {
		fprintf(stderr, "%s: empty corpus\n", FUZZ_TARGET_NAME);
		return 1;
	}
	qsort(corpus, ncorpus, sizeof(*corpus), cmp_name);
	cur = malloc(FZ_MAX_INPUT);
	buf = malloc(FZ_MAX_INPUT);
	if (cur == NULL || buf == NULL)
		return 1;
	signal(SIGABRT, on_abort);
	signal(SIGSEGV, on_abort);
	signal(SIGBUS, on_abort);
	signal(SIGFPE, on_abort);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < ncorpus; i++)
		run(corpus[i].d, corpus[i].n, corpus[i].name);
	for (unsigned long m = 0; m < mutations; m++) {
		for (i = 0; i < ncorpus; i++) {
			size_t n = mutate(&corpus[i], buf);

			run(buf, n, corpus[i].name);
			done++;
		}
		if (seconds > 0) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			if ((double)(t1.tv_sec - t0.tv_sec) +
			    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9 > seconds)
				break;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%s: %zu corpus inputs, %zu mutations, %.2f s, no failure\n",
	       FUZZ_TARGET_NAME, ncorpus, done,
	       (double)(t1.tv_sec - t0.tv_sec) +
	       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	for (i = 0; i < ncorpus; i++) {
		free(corpus[i].d);
		free(corpus[i].name);
	}
	free(corpus);
	free(cur);
	free(buf);
	return 0;
}
