#!/usr/bin/env python3
"""The serial time of one process, from a `perf sched record` of it.

    perf sched record -o sched.data -- taskset -c 0,1 bvh export DIR -o x.parquet -j 2
    perf script -i sched.data -F comm,pid,tid,cpu,time,event,trace | scripts/serial-time.py COMM [MIN_MS]

COMM is the start of the process's name (`bvh`, or the first 15 characters of
the binary's file name). For every moment between the process's first and
last event it counts the process's threads that run on a CPU and those that
are runnable (woken or preempted) but wait for one. The serial CPU time is
the time one thread runs while no other thread of the process wants a CPU:
there a second core would have had nothing of the process to run, whatever
else the machine was doing. On a loaded machine wall times stretch, but this
does not (a thread that waits for a CPU still counts as wanting one), so the
serial fraction s (serial CPU time over all CPU time) and Amdahl's bound on
two cores, 2 / (1 + s), can be read under load. It cannot see what a quiet
machine would add: a thread that is runnable but could not use the second
core well (a lock, memory bandwidth) counts as parallel here.

Prints the totals, the CPU time of each thread, and the serial spans of at
least MIN_MS milliseconds (default 2) with the thread that ran alone (find what it did with `perf
record` and the same timestamps), then the spans as long when every thread of it slept (waiting
for the disk: an fsync, a file's release that discards its blocks; or for a lock).
"""

import re
import sys
from collections import defaultdict

LINE = re.compile(
    r"^\s*(.+?)\s+(-?\d+)/(-?\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)$"
)
SWITCH = re.compile(
    r"prev_comm=(.*?) prev_pid=(-?\d+) prev_prio=-?\d+ prev_state=(\S+) ==> "
    r"next_comm=(.*?) next_pid=(-?\d+)"
)
WAKE = re.compile(r"comm=(.*?) pid=(\d+)")
WAKES = ("sched:sched_waking", "sched:sched_wakeup", "sched:sched_wakeup_new")


def main() -> int:
    prefix = sys.argv[1] if len(sys.argv) > 1 else "bvh"
    min_span = float(sys.argv[2]) / 1e3 if len(sys.argv) > 2 else 0.002
    events = []
    tgid_of: dict[int, int] = {}
    for line in sys.stdin:
        m = LINE.match(line)
        if not m:
            continue
        _comm, pid, tid, _cpu, t, ev, rest = m.groups()
        events.append((float(t), ev, int(pid), int(tid), rest))
        if int(tid) > 0:
            tgid_of[int(tid)] = int(pid)

    # The process: the one whose threads named COMM... switched most.
    counts: dict[int, int] = defaultdict(int)
    for _t, ev, _pid, _tid, rest in events:
        if (
            ev == "sched:sched_switch"
            and (m := SWITCH.search(rest))
            and m.group(1).startswith(prefix)
            and int(m.group(2)) in tgid_of
        ):
            counts[tgid_of[int(m.group(2))]] += 1
    if not counts:
        print(f"serial-time: no process named {prefix}...", file=sys.stderr)
        return 2
    tgid = max(counts, key=lambda k: counts[k])
    mine = {tid for tid, p in tgid_of.items() if p == tgid}

    state: dict[int, str] = {}  # run | wait | sleep
    names: dict[int, str] = {}
    acc: dict[str, float] = defaultdict(float)
    cpu_of: dict[int, float] = defaultdict(float)
    alone_of: dict[int, float] = defaultdict(float)
    spans: list[list[float]] = []
    asleep: list[list[float]] = []
    start = end = last = None
    for t, ev, pid, _tid, rest in events:
        if last is not None and start is not None:
            dt = t - last
            run = [k for k, s in state.items() if s == "run"]
            wait = [k for k, s in state.items() if s == "wait"]
            for k in run:
                cpu_of[k] += dt
            if len(run) == 1 and not wait:
                acc["alone"] += dt
                alone_of[run[0]] += dt
                if spans and spans[-1][2] == run[0] and spans[-1][1] == last:
                    spans[-1][1] = t
                else:
                    spans.append([last, t, run[0]])
            elif len(run) >= 2:
                acc["two or more running"] += dt
            elif run:
                acc["one running, others waiting for a CPU"] += dt
            elif wait:
                acc["none running, some waiting for a CPU"] += dt
            else:
                acc["all asleep (I/O, locks, nothing to do)"] += dt
                if asleep and asleep[-1][1] == last:
                    asleep[-1][1] = t
                else:
                    asleep.append([last, t])
        last = t
        if ev == "sched:sched_switch" and (m := SWITCH.search(rest)):
            prev, pstate, nxt = int(m.group(2)), m.group(3), int(m.group(5))
            if prev in mine:
                names[prev] = m.group(1)
                if pstate[0] in "XZ":
                    state.pop(prev, None)
                else:
                    state[prev] = "wait" if pstate.startswith("R") else "sleep"
            if nxt in mine:
                names[nxt] = m.group(4)
                state[nxt] = "run"
                start = t if start is None else start
        elif ev in WAKES and (m := WAKE.search(rest)):
            k = int(m.group(2))
            if k in mine and state.get(k) != "run":
                state[k] = "wait"
        elif ev == "sched:sched_process_exit" and (m := WAKE.search(rest)):
            state.pop(int(m.group(2)), None)
        if pid == tgid and start is not None:
            end = t

    if start is None or end is None:
        print("serial-time: the process never ran", file=sys.stderr)
        return 2
    cpu = sum(cpu_of.values())
    s = acc["alone"] / cpu if cpu else 0.0
    print(f"process {tgid}: {(end - start) * 1e3:.1f} ms wall, {cpu * 1e3:.1f} ms CPU")
    for k in (
        "alone",
        "two or more running",
        "one running, others waiting for a CPU",
        "none running, some waiting for a CPU",
        "all asleep (I/O, locks, nothing to do)",
    ):
        print(f"  {k:42s} {acc[k] * 1e3:8.1f} ms")
    alone_ms, bound = acc["alone"] * 1e3, 2 / (1 + s)
    print(
        f"serial CPU time {alone_ms:.1f} ms: s = {s:.3f}, Amdahl on two cores {bound:.2f}x"
    )
    print("CPU time by thread (ms, of which alone):")
    for k, v in sorted(cpu_of.items(), key=lambda kv: -kv[1]):
        name = names.get(k, "?") + (" (main)" if k == tgid else "")
        print(f"  {k:8d} {name:23s} {v * 1e3:8.1f} {alone_of[k] * 1e3:8.1f}")
    print(f"alone for {min_span * 1e3:g} ms or more (ms from the first switch-in):")
    for a, b, k in spans:
        if b - a >= min_span:
            span = f"{(a - start) * 1e3:8.1f} .. {(b - start) * 1e3:8.1f}  {(b - a) * 1e3:6.1f}"
            print(f"  {span}  {k} {names.get(k, '?')}")
    print(f"all asleep for {min_span * 1e3:g} ms or more (ms from the first switch-in):")
    for a, b in asleep:
        if b - a >= min_span:
            print(f"  {(a - start) * 1e3:8.1f} .. {(b - start) * 1e3:8.1f}  {(b - a) * 1e3:6.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
