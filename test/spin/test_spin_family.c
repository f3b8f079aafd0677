/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spin_family_check(): the one check of a handler family, for the
 * built-in table (spin_rt_create) and for every family of a --handlers
 * plugin (app/spinnic/plugins.c): name length and characters, at least
 * one handler.
 */
#include <errno.h>
#include <stdio.h>

#include "spin_test.h"

static int
pay(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	return SPIN_SUCCESS;
}

static void
pay_burst(const struct spin_pkt *pkts, unsigned n, int *rc,
	  struct spin_hctx *h)
{
	for (unsigned i = 0; i < n; i++)
		rc[i] = SPIN_SUCCESS;
}

static int
out(const struct spin_out_pkt *pkt, struct spin_hctx *h)
{
	return SPIN_SUCCESS;
}

static void
done(void *app_msg, const struct spin_msg_result *r)
{
}

static void
refused(const struct spin_handler_family *f, const char *why_part)
{
	const char *why = NULL;

	assert_int_equal(spin_family_check(f, &why), -EINVAL);
	assert_non_null(why);
	if (strstr(why, why_part) == NULL)
		fail_msg("reason '%s' lacks '%s'", why, why_part);
	/* the reason is optional */
	assert_int_equal(spin_family_check(f, NULL), -EINVAL);
}

static void
test_check(void **state)
{
	char name47[48], name48[49];
	struct spin_handler_family f = { .name = "ok", .payload = pay };
	const struct spin_handler_family *const *b;
	const char *why = "untouched";

	assert_int_equal(spin_family_check(&f, &why), 0);
	assert_string_equal(why, "untouched");
	refused(NULL, "NULL");
	f.name = NULL;
	refused(&f, "no name");
	f.name = "";
	refused(&f, "no name");
	memset(name47, 'a', 47);
	name47[47] = '\0';
	f.name = name47;
	assert_int_equal(spin_family_check(&f, NULL), 0);
	memset(name48, 'a', 48);
	name48[48] = '\0';
	f.name = name48;
	refused(&f, "48 bytes");
	f.name = "two words";
	refused(&f, "printable");
	f.name = "tab\there";
	refused(&f, "printable");
	f.name = "del\x7f";
	refused(&f, "printable");
	f.name = "caf\xc3\xa9";
	refused(&f, "printable");
	f.name = "x";
	f.payload = NULL;
	refused(&f, "no handler");
	/* init alone is no handler */
	refused(&f, "no handler");
	f.outbound = out;
	assert_int_equal(spin_family_check(&f, NULL), 0);
	/* a burst handler needs the one-packet handler beside it */
	f.payload_burst = pay_burst;
	refused(&f, "payload_burst without payload");
	f.payload = pay;
	assert_int_equal(spin_family_check(&f, NULL), 0);
	for (b = spin_handler_families; *b != NULL; b++)
		assert_int_equal(spin_family_check(*b, NULL), 0);
}

/* spin_rt_create() applies it to its table */
static void
test_rt_create(void **state)
{
	static const struct spin_handler_family spaced = {
		.name = "two words", .payload = pay };
	static const struct spin_host_ops ops = {
		.dma_write = test_dma_write,
		.dma_read = test_dma_read,
		.msg_done = done,
		.pkt_release = test_pkt_release,
	};
	const struct spin_handler_family *const t[] = { &spaced, NULL };
	struct spin_rt_conf c = { .ops = &ops, .families = t };
	struct spin_rt *rt;

	errno = 0;
	assert_null(spin_rt_create(&c));
	assert_int_equal(errno, EINVAL);
	c.families = spin_handler_families;
	rt = spin_rt_create(&c);
	assert_non_null(rt);
	spin_rt_destroy(rt);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_rt_create),
	};

	test_eal_init(argv[0]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
