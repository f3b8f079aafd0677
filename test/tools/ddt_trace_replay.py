#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Replay a SPINNIC_DDT_TRACE file: every decision as paper 001's
Algorithm 1 (chooser `threshold`, and `aware` without a cost table) or the
documented aware rule would take it.

Written from paper 001's Algorithm 1 as restated in
shared/papers/notes/notes-001_004.md §1.2 and from doc/NOTES.md
"Layout-aware typed receives (paper 001)" ("The trace file" and the rules
it refers to); imports nothing from the C tree. Usage:

    ddt_trace_replay.py [--min-lines N] [--quiet] TRACE

The file is hostile input: every line is checked against the format
(fields in order, numbers as %.17g writes them, names from fixed sets) and
the replay keeps its own state per layout (uses, side, queued, built) to
compare with what the line says. Exit status 0 when every line is as the
rules say, 1 with the differences on stderr, 2 when the file is not a
trace (unreadable, malformed, too large).
"""
import re
import sys

# The rule's constants (doc/NOTES.md, notes-001_004 §1.2: T = 2 KiB).
T = 2048.0
HYST = 0.10
CLOSE = 0.25
OBS_MIN = 3
EXPLORE_MIN = 8
EXPLORE_MAX = 128
EXPLORE_CLOSE = 16
PREP_USES = 2

MAX_BYTES = 64 << 20
MAX_LINE = 4096

CHOOSERS = ("aware", "static", "threshold")
GATES = ("second", "eager", "rent")
STATES = ("new", "queued", "preparing", "ready", "failed")
CLASSES = ("contig", "vector", "indexed-block", "general")
NIC = ("iovec", "specialized", "hpu-local", "ro-cp", "rw-cp")
STRATS = ("auto", "host", "contig") + NIC

NUM = r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?"
UINT = r"\d{1,20}"
FLAG = r"[01]"
HEADER = re.compile(r"# spinnic-ddt-trace 3 pid (\d{1,10})")
# (name, pattern) in the order the library writes them
FIELDS = (
    ("id", UINT), ("use", UINT), ("ch", "|".join(CHOOSERS)),
    ("gate", "|".join(GATES)), ("table", FLAG),
    ("state", "|".join(STATES)), ("cls", "|".join(CLASSES)),
    ("size", UINT), ("blocks", UINT), ("l", NUM), ("pkts", UINT),
    ("region", FLAG), ("ready", FLAG),
    ("host", "(" + NUM + ")/(" + UINT + ")"),
    ("nic", "(" + NUM + ")/(" + UINT + ")"),
    ("on_nic", FLAG), ("at", "(" + UINT + ")/(" + UINT + ")"),
    ("xn", UINT), ("built", "|".join(re.escape(s) for s in STRATS)),
    ("cand", "|".join(re.escape(s) for s in STRATS)), ("prepare", FLAG),
    ("t_host", NUM), ("t_nic", NUM), ("prep", NUM), ("queued", FLAG),
    ("explored", FLAG), ("fallback", FLAG),
)
LINE = re.compile(
    " ".join(n + " (" + p + ")" for n, p in FIELDS) + " -> (" +
    "|".join(re.escape(s) for s in STRATS) + ")")


class Malformed(Exception):
    pass


def num(s):
    v = float(s)
    if v != v or v in (float("inf"), float("-inf")):
        raise Malformed("not a finite number: " + s)
    return v


def parse(line):
    """The fields of one decision line as a dict, or Malformed."""
    m = LINE.fullmatch(line)
    if m is None:
        raise Malformed("not a decision line")
    g = list(m.groups())
    d = {}
    i = 0
    for name, _ in FIELDS:
        if name in ("host", "nic"):
            d[name] = num(g[i + 1])
            d["n_" + name] = int(g[i + 2])
            i += 3
            continue
        if name == "at":
            d["at_host"] = int(g[i + 1])
            d["at_nic"] = int(g[i + 2])
            i += 3
            continue
        d[name] = g[i]
        i += 1
    d["strat"] = g[i]
    for k in ("id", "use", "size", "blocks", "pkts", "xn"):
        d[k] = int(d[k])
    for k in ("table", "region", "ready", "on_nic", "prepare", "queued",
              "explored", "fallback"):
        d[k] = d[k] == "1"
    for k in ("l", "t_host", "t_nic", "prep"):
        d[k] = num(d[k])
    if d["id"] == 0 or d["use"] == 0:
        raise Malformed("id and use start at 1")
    if d["ch"] == "static":
        raise Malformed("static decisions are not traced")
    return d


def class_rule(cls):
    """Today's class rule: the NIC candidate of Algorithm 1."""
    return "specialized" if cls in ("vector", "indexed-block") else "rw-cp"


def is_nic(s):
    return s in NIC


def close(d):
    """Host and NIC within CLOSE of the host's time (aware, a table)."""
    return (d["cand"] != "host" and d["t_host"] > 0.0 and
            d["t_nic"] >= 0.0 and
            abs(d["t_host"] - d["t_nic"]) < CLOSE * d["t_host"])


def gate_open(d, prepare):
    """Whether this post may queue the preparation (it needs prepare)."""
    if not prepare:
        return False
    if d["ch"] != "aware" or d["gate"] == "eager":
        return True  # Algorithm 1: at the first use
    if d["use"] < PREP_USES:
        return False
    if (d["gate"] != "rent" or not d["prep"] > 0.0 or d["t_host"] < 0.0
            or d["t_nic"] < 0.0):
        return True
    # ski rental on this layout's predicted preparation (prep): a close
    # call may gain up to the close band more than the times say
    gain = d["t_host"] - d["t_nic"]
    if close(d):
        gain += CLOSE * d["t_host"]
    return gain > 0.0 and d["use"] * gain >= d["prep"]


class Layout:
    """What the replay knows of one cache entry."""

    def __init__(self):
        self.use = 0
        self.on_nic = False
        self.queued_once = False
        # the age of the estimates: the use of each path's last post or
        # sample (its count grew since the previous line), the later
        self.at_host = 0
        self.at_nic = 0
        self.n_host = 0
        self.n_nic = 0
        self.xn = 0


def decide(d, lay, err):
    """The rule's (candidate, prepare, strategy before exploration)."""
    if d["size"] == 0 or d["cls"] == "contig":
        return "contig", False, "contig"
    if d["ch"] == "threshold" or not d["table"]:
        # Algorithm 1: only the average block length l counts; a miss
        # goes host, a hit goes HA (the NIC) once registered (ready)
        if d["t_host"] != -1.0 or d["t_nic"] != -1.0:
            err("Algorithm 1 compares no times")
        cand = class_rule(d["cls"])
        prepare = d["l"] > T
        strat = cand if prepare and d["ready"] else "host"
        if d["use"] == 1 and strat != "host":
            err("a miss must go host (Algorithm 1)")
        return cand, prepare, strat
    # aware with a cost table
    cand = d["cand"]
    if cand not in NIC and cand != "host":
        err("candidate %s is neither a NIC strategy nor host" % cand)
    if cand == "specialized" and d["cls"] not in ("vector",
                                                  "indexed-block"):
        err("specialized named for a %s layout" % d["cls"])
    if d["built"] != "auto" and cand not in (d["built"], "host"):
        err("an object is built (%s): the candidate must be it, not %s" %
            (d["built"], cand))
    th, tn = d["t_host"], d["t_nic"]
    if d["n_host"] >= OBS_MIN and th != d["host"]:
        err("t_host %r is not the host estimate %r of %d samples" %
            (th, d["host"], d["n_host"]))
    if d["n_host"] < OBS_MIN and th < 0.0:
        err("a table predicts the host path")
    if cand == "host":
        if tn != -1.0:
            err("no NIC candidate, yet t_nic %r" % tn)
    elif d["n_nic"] >= OBS_MIN and tn != d["nic"]:
        err("t_nic %r is not the NIC estimate %r of %d samples" %
            (tn, d["nic"], d["n_nic"]))
    elif tn < 0.0:
        err("a NIC candidate without a predicted time")
    prepare = cand != "host" and (th < 0.0 or tn * (1.0 + HYST) < th)
    # on the NIC already: it leaves only for a host (1 + h) times faster
    if (d["on_nic"] and d["ready"] and cand != "host" and th >= 0.0 and
            not th * (1.0 + HYST) < tn):
        return cand, prepare, cand
    # a close call the NIC has not been measured on: prepare, measure
    if not prepare and d["n_nic"] < OBS_MIN and close(d):
        return cand, True, cand if d["ready"] else "host"
    return cand, prepare, cand if prepare and d["ready"] else "host"


def check(d, lay, err):
    if d["use"] != lay.use + 1:
        err("use %d after use %d" % (d["use"], lay.use))
    lay.use = d["use"]
    if d["use"] == 1 and d["state"] != "new":
        err("a new layout's first use in state %s" % d["state"])
    if d["ready"] != (d["state"] == "ready"):
        err("ready %d in state %s" % (d["ready"], d["state"]))
    if d["state"] in ("queued", "preparing", "ready") and not lay.queued_once:
        err("state %s before any post queued the layout" % d["state"])
    if d["state"] in ("queued", "preparing", "ready") and d["built"] == "auto":
        err("state %s with nothing built" % d["state"])
    if d["on_nic"] != lay.on_nic:
        err("on_nic %d, the previous decision was %s" %
            (d["on_nic"], "NIC" if lay.on_nic else "host"))
    # samples that came since the previous post: the path's age restarts
    # at that post's use
    if d["n_host"] != lay.n_host:
        lay.at_host = d["use"] - 1
    if d["n_nic"] != lay.n_nic:
        lay.at_nic = d["use"] - 1
    lay.n_host, lay.n_nic = d["n_host"], d["n_nic"]
    if (d["at_host"], d["at_nic"], d["xn"]) != (lay.at_host, lay.at_nic,
                                                lay.xn):
        err("at %d/%d xn %d, the replay has %d/%d xn %d" %
            (d["at_host"], d["at_nic"], d["xn"], lay.at_host, lay.at_nic,
             lay.xn))
    if d["l"] != (d["size"] / d["blocks"] if d["blocks"] else 0.0):
        err("l %r is not size / blocks" % d["l"])
    cand, prepare, rule = decide(d, lay, err)
    if d["cand"] != cand:
        err("candidate %s, the rule names %s" % (d["cand"], cand))
    if d["prepare"] != prepare:
        err("prepare %d, the rule says %d" % (d["prepare"], prepare))
    # exploration by age (aware with a table, prepared): the path not
    # chosen once its estimate is xn uses old (since its last post or
    # sample), at most EXPLORE_CLOSE in a close call; xn starts at
    # EXPLORE_MIN, doubles at each exploration up to EXPLORE_MAX, and
    # starts again when the side flips
    side = rule != "host"
    if side != lay.on_nic or lay.xn < EXPLORE_MIN:
        lay.xn = EXPLORE_MIN
    lay.on_nic = side
    aware_t = d["ch"] == "aware" and d["table"] and rule != "contig"
    at = lay.at_host if side else lay.at_nic
    bound = min(lay.xn, EXPLORE_CLOSE) if close(d) else lay.xn
    want_explore = (aware_t and d["ready"] and d["use"] >= at and
                    d["use"] - at >= bound)
    if d["explored"] != want_explore:
        err("explored %d, the rule says %d (use %d, age %d, bound %d)" %
            (d["explored"], want_explore, d["use"], d["use"] - at, bound))
    if want_explore:
        if side:
            lay.at_host = d["use"]
        else:
            lay.at_nic = d["use"]
        lay.xn = min(2 * lay.xn, EXPLORE_MAX)
    s = rule
    if d["explored"]:
        s = cand if rule == "host" else "host"
    # the path posted will give a sample: its age starts again
    if d["strat"] == "host":
        lay.at_host = d["use"]
    elif is_nic(d["strat"]):
        lay.at_nic = d["use"]
    if is_nic(s) and d["fallback"]:
        if d["strat"] != "host":
            err("a fallback posted %s, not host" % d["strat"])
    elif d["fallback"]:
        err("a fallback from %s" % s)
    elif d["strat"] != s:
        err("posted %s, the rule says %s" % (d["strat"], s))
    # queuing: a new layout is queued when the gate opens (Algorithm 1:
    # at once when l > T); a failed one may be retried later
    g = gate_open(d, prepare)
    if d["queued"]:
        if d["state"] not in ("new", "failed") or not g:
            err("queued in state %s, gate %s" % (d["state"], g))
        lay.queued_once = True
    elif d["state"] == "new" and g:
        err("the gate is open on a new layout and it was not queued")


def replay(path, min_lines, quiet):
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
    except OSError as e:
        print("%s: %s" % (path, e), file=sys.stderr)
        return 2
    if len(raw) > MAX_BYTES:
        print("%s: over %d bytes" % (path, MAX_BYTES), file=sys.stderr)
        return 2
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        print("%s: not ASCII" % path, file=sys.stderr)
        return 2
    if text and not text.endswith("\n"):
        print("%s: the last line is cut" % path, file=sys.stderr)
        return 2
    layouts = None
    errors = []
    n = 0
    count = {}
    for no, line in enumerate(text.split("\n")[:-1], 1):
        if len(line) > MAX_LINE:
            print("%s:%d: line over %d bytes" % (path, no, MAX_LINE),
                  file=sys.stderr)
            return 2
        if line.startswith("#"):
            if HEADER.fullmatch(line) is None:
                print("%s:%d: not a trace header" % (path, no),
                      file=sys.stderr)
                return 2
            layouts = {}  # a new process: ids start again
            continue
        if layouts is None:
            print("%s:%d: a decision before the header" % (path, no),
                  file=sys.stderr)
            return 2
        try:
            d = parse(line)
        except (Malformed, ValueError) as e:
            print("%s:%d: malformed: %s" % (path, no, e), file=sys.stderr)
            return 2
        lay = layouts.setdefault(d["id"], Layout())

        def err(msg, no=no, d=d):
            errors.append("%s:%d: id %d use %d: %s" %
                          (path, no, d["id"], d["use"], msg))

        check(d, lay, err)
        n += 1
        key = (d["ch"], "table" if d["table"] else "no table", d["strat"])
        count[key] = count.get(key, 0) + 1
    for e in errors[:50]:
        print(e, file=sys.stderr)
    if len(errors) > 50:
        print("... %d differences in all" % len(errors), file=sys.stderr)
    if n < min_lines:
        print("%s: %d decisions, expected at least %d" %
              (path, n, min_lines), file=sys.stderr)
        return 1
    if not quiet:
        print("%s: %d decisions replayed, %d differences" %
              (path, n, len(errors)))
        for k in sorted(count):
            print("  %s, %s: %s %d" % (k[0], k[1], k[2], count[k]))
    return 1 if errors else 0


def main(argv):
    min_lines = 1
    quiet = False
    args = argv[1:]
    while args and args[0].startswith("--"):
        if args[0] == "--min-lines" and len(args) > 1 and \
                args[1].isdigit():
            min_lines = int(args[1])
            args = args[2:]
        elif args[0] == "--quiet":
            quiet = True
            args = args[1:]
        else:
            break
    if len(args) != 1:
        print("usage: ddt_trace_replay.py [--min-lines N] [--quiet] TRACE",
              file=sys.stderr)
        return 2
    return replay(args[0], min_lines, quiet)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
