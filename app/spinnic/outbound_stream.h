/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file outbound_stream.h
 * Streaming puts (SPUT_START/SPUT_STREAM) and processed puts (PROCESS_PUT)
 * in the outbound engine (outbound_stream.c, paper 000 §3.1; doc/streams.md).
 * Used by outbound.c and commands.c, in the outbound role. Not installed.
 */
#ifndef SPINNIC_OUTBOUND_STREAM_H
#define SPINNIC_OUTBOUND_STREAM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct out_client;
struct rte_mbuf;
struct spinnic_engine;


/**
 * Progress the client's current command when it is one of the three
 * (called by eng_commands_poll of commands.c).
 * @return packets built
 */
unsigned eng_sput_progress(struct spinnic_engine *eng, struct out_client *oc,
			   unsigned budget);
/** Forget the streams of a client (detach, fini): frees their state. */
void eng_sput_forget(struct spinnic_engine *eng, struct out_client *oc);
/**
 * Take back the processed-put packets the HPUs built (outbound jobs) and
 * send them; retry those that found no TX room (outbound role, every
 * poll).
 * @return packets handled (sent, failed or dropped)
 */
unsigned eng_sput_poll(struct spinnic_engine *eng);
/** No processed-put packet is out on the HPUs or waiting for TX room
 *  (spinnic_engine_quiet(), from any thread). */
bool eng_sput_idle(const struct spinnic_engine *eng);
/** Free the outbound-job state (engine fini, no lcore running). */
void eng_sput_fini(struct spinnic_engine *eng);
/** Print the non-zero streaming/processed-put counters. */
void eng_sput_stats_print(const struct spinnic_engine *eng, FILE *f);

#endif
