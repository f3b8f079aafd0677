#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check an Active Access log ring and target memory from raw dumps.

Written from doc/NOTES.md "Active Access" (the bit table and the ring byte
layout) only; imports nothing from the C tree. Usage:

    aa_oracle.py TRACE.json RING.bin MEMORY.bin

TRACE.json (written by itest_aa):
  base        client address of MEMORY.bin's first byte
  payload     NIC packet payload bytes (pieces split at packet boundaries)
  src         [nid, pid] of the initiator
  pages       bits of each 4096-byte page of MEMORY.bin, in order
  tgt_init    [a, b]: memory byte j started as (j * a + b) & 0xff
  ops         in order: {"op": "put"|"get", "off": buffer offset,
              "len": bytes, "mul": m, "add": k} (a put's byte i is
              (i * m + k) & 0xff)
Exit status 0 when every record and byte is as the table says, else 1
with the differences on stderr.
"""
import json
import struct
import sys

PAGE = 4096
W, R, WL, WLD, RL, RLD = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
PUT_META, PUT_DATA, GET_META, GET_DATA = 1, 2, 3, 4
PUT_BLOCKED, GET_BLOCKED, PAD = 5, 6, 15
REDIRECTED = 0x1


def put_rule(bits):
    """(memory written, fails, redirected, data logged, kind)."""
    if bits & W:
        if bits & WLD:
            return True, False, False, True, PUT_DATA
        return True, False, False, False, PUT_META if bits & WL else 0
    if bits & WLD:
        return False, False, True, True, PUT_DATA
    return False, True, False, False, PUT_BLOCKED if bits & WL else 0


def get_rule(bits):
    if bits & R:
        if bits & RLD:
            return True, False, False, True, GET_DATA
        return True, False, False, False, GET_META if bits & RL else 0
    return False, True, False, False, GET_BLOCKED if bits & (RL | RLD) else 0


def expected(trace):
    mem = bytearray((j * trace["tgt_init"][0] + trace["tgt_init"][1]) & 0xff
                    for j in range(len(trace["pages"]) * PAGE))
    pay = trace["payload"]
    recs = []
    for op in trace["ops"]:
        put = op["op"] == "put"
        data = bytes((i * op["mul"] + op["add"]) & 0xff
                     for i in range(op["len"])) if put else None
        rule = put_rule if put else get_rule
        pages = range(op["off"] // PAGE,
                      (op["off"] + op["len"] - 1) // PAGE + 1)
        refused_get = not put and any(rule(trace["pages"][p])[1]
                                      for p in pages)
        m = 0
        while m < op["len"]:
            at = op["off"] + m
            bits = trace["pages"][at // PAGE]
            step = min(op["len"] - m, PAGE - at % PAGE)
            if not refused_get:
                step = min(step, pay - m % pay)
            mem_ok, fails, redir, logs_data, kind = rule(bits)
            if put and mem_ok:
                mem[at:at + step] = data[m:m + step]
            if kind and (put or not refused_get or fails):
                if put:
                    rec_data = data[m:m + step] if logs_data else b""
                else:
                    rec_data = bytes(mem[at:at + step]) if logs_data else b""
                recs.append((kind, REDIRECTED if redir else 0, bits,
                             trace["base"] + at, m, rec_data))
            m += step
    return recs, mem


def parse(ring):
    prod, lost, err, version, size = struct.unpack_from("<QQIIQ", ring, 0)
    cons = struct.unpack_from("<Q", ring, 64)[0]
    errors = []
    if version != 1 or size != len(ring) - 128 or err != 0 or lost != 0:
        errors.append("header: version %d size %d err %d lost %d"
                      % (version, size, err, lost))
    recs, pos, seq = [], cons, 1 + 0  # the consumer never ran: cons 0
    srcs = set()
    while pos < prod:
        off = 128 + pos % size
        (rseq, kind, flags, length, mode, addr, nid, pid, msg_id, msg_off,
         hdr_data, ts) = struct.unpack_from("<IHHIIQIIQQQQ", ring, off)
        if rseq != seq:
            errors.append("seq %d at %d, want %d" % (rseq, pos, seq))
            break
        seq += 1
        pos += 64 + (length + 63) // 64 * 64
        if kind == PAD:
            continue
        srcs.add((nid, pid))
        recs.append(((kind, flags, mode, addr, msg_off,
                      bytes(ring[off + 64:off + 64 + length])), msg_id))
    return recs, srcs, errors


def main():
    trace = json.load(open(sys.argv[1]))
    ring = open(sys.argv[2], "rb").read()
    mem = open(sys.argv[3], "rb").read()
    want, want_mem = expected(trace)
    got, srcs, errors = parse(ring)
    # pieces of one message may be logged in any order: compare per
    # message (msg_id), in the order the messages were sent
    by_msg = {}
    order = []
    for rec, msg_id in got:
        if msg_id not in by_msg:
            by_msg[msg_id] = []
            order.append(msg_id)
        by_msg[msg_id].append(rec)
    got_sorted = [r for mid in order for r in sorted(by_msg[mid],
                                                     key=lambda x: x[4])]
    # expected records are grouped per operation already; an operation
    # without records has no msg_id in the ring
    if sorted(got_sorted) != sorted(want):
        errors.append("records: %d logged, %d expected" %
                      (len(got_sorted), len(want)))
        for r in want:
            if r not in got_sorted:
                errors.append("  missing kind %d flags %d mode %#x addr "
                              "%#x msg_off %d len %d" % (r[0], r[1], r[2],
                                                         r[3], r[4],
                                                         len(r[5])))
        for r in got_sorted:
            if r not in want:
                errors.append("  unexpected kind %d flags %d mode %#x addr "
                              "%#x msg_off %d len %d" % (r[0], r[1], r[2],
                                                         r[3], r[4],
                                                         len(r[5])))
    if srcs - {tuple(trace["src"])}:
        errors.append("initiators %s, want %s" % (sorted(srcs),
                                                   trace["src"]))
    if bytes(want_mem) != mem:
        bad = [j for j in range(len(mem)) if mem[j] != want_mem[j]]
        errors.append("memory: %d bytes differ, first at %d" %
                      (len(bad), bad[0]))
    for e in errors:
        print("aa_oracle: " + e, file=sys.stderr)
    print("aa_oracle: %d records, %d memory bytes checked" %
          (len(want), len(mem)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
