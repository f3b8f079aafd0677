/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file harness.h
 * Integration-test harness: starts a real `spinnic --virtual 2` in a fresh
 * socket directory, starts client processes (itest_client) on its nodes,
 * reads their lines with timeouts and always kills everything at exit.
 *
 * Every wait has a timeout and the whole test runs under alarm(): a test
 * never hangs. A test exits 77 (skip) when spinnic cannot start for lack
 * of resources (EAL initialisation failed: hugepages, memory, devices).
 */
#ifndef ITEST_HARNESS_H
#define ITEST_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/** Exit status meaning "skipped" for meson. */
#define ITEST_SKIP 77

/** A running client process. */
struct itest_client {
	pid_t pid;
	int out;           /**< read end of its stdout */
	int in;            /**< write end of its stdin */
	const char *name;  /**< for messages */
};

/**
 * Start the test: name it, arm the overall timeout, install the cleanup.
 * @param name test name for messages
 * @param timeout_s whole-test limit (alarm)
 */
void itest_init(const char *name, unsigned timeout_s);

/**
 * Start spinnic --virtual 2 with extra options (NULL-terminated, may be
 * NULL) and wait for "spinnic: ready". Exits 77 when spinnic cannot start
 * for lack of resources, 1 on any other failure. With
 * SPINNIC_ITEST_HANDLERS=PLUGIN in the environment (meson sets it for the
 * tests of plugin families, e.g. the Active Access ones) every spinnic
 * started also gets `--handlers PLUGIN`.
 */
void itest_spinnic_start(const char *const *extra);

/**
 * Make the next itest_spinnic_start() run `--virtual @p n` (1..16; default
 * 2); the final checks (itest_spinnic_finish(), itest_expect_no_drops(),
 * itest_expect_no_leaks()) then cover nodes 0..n-1.
 */
void itest_set_nodes(unsigned n);

/**
 * Nodes of a test run over a real port: with SPINNIC_ITEST_LINK=memif (a
 * memif link, no root needed) or =afxdp (a veth pair in two network
 * namespaces through the af_xdp PMD and bpf/spinnic_xdp.o; root, 77
 * otherwise) itest_spinnic_start() starts two spinnic processes, one node
 * each (nid 0 and 1, sockets node0.sock and node1.sock as usual), linked
 * by that port, and the final checks read each process's counters;
 * itest_set_nodes() must then be 2 (the default).
 * @return 2 with a link, 0 on --virtual
 */
unsigned itest_link_nodes(void);

/**
 * With a link (itest_link_nodes() 2): the process (and process group) of
 * node @p node's spinnic, e.g. to stop it (SIGSTOP: its link goes silent);
 * -1 without a link or before itest_spinnic_start().
 */
pid_t itest_link_pid(unsigned node);

/** The pid of the spinnic itest_spinnic_start() started (-1: none). */
pid_t itest_spinnic_pid(void);

/** Path of node @p node's control socket (valid after itest_spinnic_start). */
const char *itest_socket_path(unsigned node);

/** True while spinnic runs. */
bool itest_spinnic_alive(void);

/**
 * Stop spinnic (SIGTERM, then SIGKILL after a grace period) and wait.
 * @return its exit status (-1 when killed by a signal)
 */
int itest_spinnic_stop(void);

/**
 * Stop spinnic and check its final counters: exit status 0, and on both
 * nodes no client left attached, no mbuf still in use and no sPIN context
 * left (nothing leaked).
 */
void itest_spinnic_finish(void);

/**
 * After itest_spinnic_finish(): require that neither node dropped a packet
 * (clean traffic must not lose or refuse anything).
 */
void itest_expect_no_drops(void);

/**
 * spinnic's output so far (stdout and stderr, NUL-terminated, malloc'd by
 * the harness and valid until the next call).
 */
const char *itest_spinnic_log(void);

/**
 * Start an itest_client on node @p node with arguments @p argv
 * (NULL-terminated, without the program name).
 */
void itest_client_start(struct itest_client *c, unsigned node,
			const char *name, const char *const *argv);

/**
 * Read one line from a client (without the newline).
 * @return 0, or -1 on EOF or timeout (a message is printed)
 */
int itest_client_line(struct itest_client *c, char *buf, size_t len,
		      unsigned timeout_ms);

/** Read lines until one starts with @p prefix; fail the test otherwise. */
void itest_client_expect(struct itest_client *c, const char *prefix,
			 char *buf, size_t len, unsigned timeout_ms);

/** Send a line to a client's stdin. */
void itest_client_say(struct itest_client *c, const char *line);

/**
 * Wait for a client to exit.
 * @return its exit status, 128+signal when killed, -1 on timeout (then it
 *   is killed)
 */
int itest_client_wait(struct itest_client *c, unsigned timeout_ms);

/** SIGKILL a client and reap it. */
void itest_client_kill(struct itest_client *c);

/**
 * Run one exchange: start a target client on @p tnode, read its
 * "ready NID PID PT" line, start an initiator on @p inode with
 * "target=NID:PID pt=PT" added to its arguments, and require both to print
 * a line starting with "ok" and exit 0. Fails the test otherwise.
 * @param what name of the exchange for messages
 */
void itest_run_pair(const char *what, unsigned tnode,
		    const char *const *targv, unsigned inode,
		    const char *const *iargv);

/**
 * Start a client and wait for its "ready NID PID PT" line.
 * @param nid_p, pid_p, pt_p what it said
 */
void itest_client_ready(struct itest_client *c, unsigned node,
			const char *name, const char *const *argv,
			unsigned *nid_p, unsigned *pid_p, unsigned *pt_p);

/** Print a failure message and exit 1 (cleanup runs). */
void itest_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2),
						     noreturn));

/** Fail unless @p cond. */
#define ITEST_CHECK(cond, ...) do { \
	if (!(cond)) \
		itest_fail(__VA_ARGS__); \
} while (0)

/**
 * Value of counter @p name for node @p node in spinnic's final counters
 * (after itest_spinnic_stop()): the number after "name" on the first line
 * that contains it inside the node's block.
 * @return the value, or -1 when not found
 */
long long itest_counter(unsigned node, const char *name);

/** The test's private directory (sockets, spinnic's log). */
const char *itest_dir(void);

/**
 * Run spinnic with exactly @p args (NULL-terminated, without the program
 * name; EAL args and "--" as the caller wants them) until it exits; its
 * output is itest_spinnic_log() afterwards.
 * @param timeout_ms then it is killed
 * @return its exit status, -1 when killed by a signal or the timeout
 */
int itest_spinnic_run(const char *const *args, unsigned timeout_ms);

/**
 * Copy the word (up to white space) that follows the first occurrence of
 * @p marker in spinnic's output so far.
 * @return 0, or -1 when the marker is not there (or the word is empty)
 */
int itest_log_word(const char *marker, char *out, size_t len);

/**
 * Start a helper program (a capture tool, ...) with stdout and stderr
 * appended to @p log_path; the harness kills it at exit like a client.
 * @param argv program (looked up in PATH) and arguments, NULL-terminated
 * @return its pid (fails the test when it cannot be started)
 */
pid_t itest_spawn(const char *const *argv, const char *log_path);

/**
 * Stop a program of itest_spawn(): send @p sig, wait up to @p timeout_ms,
 * then SIGKILL it.
 * @return its exit status, 128+signal when a signal ended it, -1 when it
 *   had to be killed
 */
int itest_spawn_stop(pid_t pid, int sig, unsigned timeout_ms);

/**
 * Drop a reaped client (after itest_client_wait() or itest_client_kill())
 * from the harness's list, so that long tests can start more than the
 * list holds; the exit cleanup no longer signals its pid.
 */
void itest_client_forget(const struct itest_client *c);

/**
 * After itest_spinnic_finish(): require that the final counters of both
 * nodes show nothing left behind by the clients (the "live:" line): no
 * client object, region mapping or region byte, ME, NIC memory, sPIN
 * context or blob, mbuf.
 */
void itest_expect_no_leaks(void);

/*
 * Typed clients. The structs below are the C form of itest_client's
 * key=value mini-language (grammar in README.md): the harness turns them
 * into the argv. One rule for every field: a zero field is left out of the
 * argv, so the client's default applies (match 0x5a5a, seed 1, count 1,
 * ...); `len` is the exception and always passed (0-byte messages are
 * tested). Match bits 0 or seed 0 need the mini-language.
 */

/** The operation a target exposes its buffer to / an initiator issues. */
enum itest_op {
	ITEST_PUT = 0,  /**< op=put (default) */
	ITEST_GET,      /**< op=get */
};

/** Where a client's buffer lives. */
enum itest_buf {
	ITEST_BUF_REGION = 0, /**< buf=region: spin_host_alloc (default) */
	ITEST_BUF_MALLOC,     /**< buf=malloc: ordinary process memory */
};

/** What an initiator requires of the ACK / REPLY / SEND event. */
enum itest_expect {
	ITEST_EXPECT_OK = 0,          /**< expect=ok (default) */
	ITEST_EXPECT_FAIL,            /**< expect=fail */
	ITEST_EXPECT_SENDFAIL,        /**< expect=sendfail (put only) */
	ITEST_EXPECT_UNDELIVERABLE,   /**< expect=undeliverable */
};

/** The message(s) of an exchange, the same on both sides. */
struct itest_msg {
	enum itest_op op;
	uint64_t len;     /**< bytes per message (always passed) */
	uint64_t match;   /**< match bits; 0: the client's 0x5a5a */
	uint64_t seed;    /**< data pattern(i, seed); 0: the client's 1 */
	unsigned count;   /**< messages; 0: 1 */
	bool nomatch;     /**< ni=nomatch: an LE on a non-matching NI */
};

/** A target's own options (role `target`). */
struct itest_target_opts {
	enum itest_buf buf;
	bool overflow;        /**< list=overflow instead of priority */
	const char *handler;  /**< handler family; NULL: none */
	uint64_t tail;        /**< tail=T: window bytes after the data */
	/** vec=count,blocklen,stride (handler "vector"); count 0: none */
	struct { long count, blocklen, stride; } vec;
};

/** An initiator's own options (role `put` or `get`, after msg.op). */
struct itest_initiator_opts {
	enum itest_buf buf;
	enum itest_expect expect;
	unsigned window;      /**< puts in flight; 0: 1 */
};

/** What a target's "ready NID PID PT" line said. */
struct itest_peer {
	unsigned nid, pid, pt;
};

/** One exchange for itest_pair_run(). */
struct itest_pair {
	struct itest_msg msg;
	unsigned tnode;                 /**< the target's node */
	unsigned inode;                 /**< the initiator's node */
	struct itest_target_opts t;
	struct itest_initiator_opts i;
};

/**
 * Start a target client for @p m on node @p node and wait for its ready
 * line.
 * @param peer_p where to reach it, for itest_initiator_start()
 */
void itest_target_start(struct itest_client *c, unsigned node,
			const char *name, const struct itest_msg *m,
			const struct itest_target_opts *o,
			struct itest_peer *peer_p);

/**
 * Start an initiator client (role `put` or `get` from @p m->op) on node
 * @p node that sends @p m to @p peer.
 */
void itest_initiator_start(struct itest_client *c, unsigned node,
			   const char *name, const struct itest_msg *m,
			   const struct itest_initiator_opts *o,
			   const struct itest_peer *peer);

/**
 * itest_run_pair() in typed form: the target, then the initiator, both
 * must print "ok" and exit 0. Fails the test otherwise.
 * @param what name of the exchange for messages
 */
void itest_pair_run(const char *what, const struct itest_pair *p);

#endif
