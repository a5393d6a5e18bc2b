"""make bench-session: the session worker beside a naive session worker, in one run.

    python3 -m conformance.bench session                 # the reference node vs examples/naive_session_worker.py
    python3 -m conformance.bench session --quick         # the smoke run the unit test uses (~15 s a program)
    python3 -m conformance.bench session --vs my_worker.py --json bench-session.json

Everything runs through the harness's own parts: the session plane
(conformance/planes/session/: metadata server, control plane, object store)
serves each session, the runner (conformance/runner.py) starts every program
as PID 1 and measures it. The plane is built for checks and takes a check's
context; here it gets core.Context (as the crawler bench does), and a small
subclass, BenchPlane, that (1) gives the node its own default warm pool
instead of the plane's lowered one, (2) sets the variables a figure depends
on, and (3) stops the plane's Watch once the node started: that sampler reads
/proc and every scratch file every 50 ms for the secret checks, which judge
nothing here and whose CPU would compete with the node. The control plane's
intervals are set explicitly wherever a figure depends on them (they are
otherwise scaled by conformance/timescale.py).

What is measured, and how
-------------------------
Each figure is measured for the node, then for the comparison node (`--vs`,
by default examples/naive_session_worker.py when it exists), each in a
session of its own. A comparison node that is absent, or fails a figure
(exits early, never claims, never reports), shows "n/a" with the reason; the
bench goes on.

* **Probe latency** (the interactive budget: the upstream's is 100-300 ms for
  a follow-up probe): a `sample_rows` probe on a source whose content is
  1 MiB (LATENCY_SOURCE_BYTES), from the moment the control plane sent the
  claim answer that handed it out to the moment it had received the whole
  result report (the report's body read). Probes are asked one at a time, as
  a person would: the next is queued once the previous was reported and the
  node's process tree went quiet (its refill of a warm pool done), and is
  handed out at the next claim (claim interval LATENCY_CLAIM_S). Median and
  p99 (nearest rank) over the successful ones, and apart the first probe's
  (the first of its source: the source's first acquisition and the node's
  first read of its every row, D51), on a budget of its own. Beside them: the median time
  to the end of the source's download (the platform's part: the claim
  answer, the node's requests, the store), and the control plane's POSTs
  whose body arrived LATE_BODY_S or more after their head (a client that
  writes head and body separately without TCP_NODELAY waits for the server's
  delayed ACK, about 40 ms on Linux, before the body goes out).
* **Idle CPU**: user + system CPU of the whole process tree (/proc: every
  live process and every child each reaped, conformance.lifecycle.measure_cpu)
  over IDLE_WINDOW_S while the node polls an empty queue, after
  IDLE_WARMUP_S. The lease's intervals are the contract's own seconds,
  unscaled: a claim every 1 s (CLAIM_POLL_CONTRACT_S), a heartbeat every 2 s.
  /proc counts in 10 ms ticks: 0.025 % of a core over 40 s. Beside it, the
  connections the control plane accepted over the window and the full (not
  resumed) TLS handshakes among them (D53).
* **Memory over many probes**: RSS_CHECKPOINTS probes on a small source, queued
  back to back in batches; at each checkpoint, once the node waits again and
  its tree is quiet, the sum over every process of the tree (/proc/PID/status)
  of VmHWM (each process's peak resident size: the figure judged) and of
  VmRSS (resident now). Growth is the last checkpoint's minus the first's.
  The run's probes per second, back to back, are shown beside it.
* **Heartbeat while a probe runs flat out**: heartbeat interval
  BUSY_HEARTBEAT_S; one `evaluate_expression` probe over BUSY_ROWS rows whose
  56 comparisons per row keep the probe child busy for seconds: it burns CPU
  until it is done or the probe timeout set for the run (BUSY_PROBE_TIMEOUT_S)
  kills it (a SANDBOX_TIMEOUT report); the node's own checks of the source
  run before it. The gaps between the beats that
  arrived from the last beat before the claim answer to the first after the
  report; the figure is the largest |gap - interval|. A node that stops
  beating has one open gap, counted to the report.
* **Stop latency**: SIGTERM to the program as PID 1, from the signal to its
  exit, `--trials` trials per phase: *idle* (waiting between claims, claim
  interval 1 s), *acquisition wait* (an acquisition that never settles: the
  node polls it), *probe child* (a probe child burning CPU: triggered once a
  leaf process of the tree has burnt CPU after the source's download ended),
  and *report held* (the control plane holds every report's answer
  REPORT_HOLD_S; latency counted from that answer when it came after the
  signal: the probe in flight is still reported, SESSION-STOP-3, so the exit
  waits for the control plane). Each trial's verdict names the report the
  probe in flight got (SESSION_WORKER_STOPPING when the stop cut its work).
  A trial with no exit within the bound is killed and recorded as such.

Budgets (the architecture's "long-lived workers" row, SESSION-NODE-4, and
SESSION-STOP-5's stop budget of the step bench, 100 ms; the heartbeat's
deviation against the tolerance of conformance/timescale.py for its
interval), judged for the node on a full run only: --quick measures
too few probes for a p99 or a growth over 1,000 probes, so its rows say
"n/a". Output: tables on stdout, progress on stderr, `--json FILE` with every
figure and the raw numbers. Only numbers and names are ever written, never a
program's output. Exit status 0 when the node's figures were measured
(whatever they are), 1 when one could not be, 2 on bad usage.
"""

import argparse
import json
import math
import os
import statistics
import time

from conformance import faults
from conformance.bench import core
from conformance.bench.core import MiB, log
from conformance.lifecycle import measure_cpu
from conformance.planes.session.control import CLAIM_POLL_CONTRACT_S, HEARTBEAT_CONTRACT_S
from conformance.planes.session.plane import SessionPlane
from conformance.runner import HarnessError, capabilities, descendants
from conformance.timeouts import SHORT_TIMEOUT_S
from conformance.timescale import tolerance

DEFAULT_NODE = os.path.join("nodes", "session_worker.py")
DEFAULT_VS = os.path.join("examples", "naive_session_worker.py")

# The session every run gets: long enough for the longest run (1,000 probes), within the
# 30 minutes a node may admit (SESSION-LEASE-4).
LIFETIME_S = 1500.0
# The plane's variables the bench takes back to the node's own default: the plane lowers the
# warm pool to 1 to make checks cheaper; the latency figure is the node's as deployed.
PLANE_LOWERED = ("MR_SESSION_WORKER_WARM_POOL_SIZE",)
PROBE_TIMEOUT_ENV = "MR_SESSION_WORKER_PROBE_TIMEOUT_SECONDS"

# Probe latency.
LATENCY_SOURCE_BYTES = 1 * MiB  # the content a latency probe reads
LATENCY_PROBES, QUICK_LATENCY_PROBES = 100, 5
LATENCY_CLAIM_S = 0.2  # claim interval of the latency run: a queued probe is handed out within this
LATENCY_HEARTBEAT_S = HEARTBEAT_CONTRACT_S

# Idle CPU: the contract's intervals, unscaled.
IDLE_CLAIM_S = CLAIM_POLL_CONTRACT_S  # 1 s
IDLE_HEARTBEAT_S = HEARTBEAT_CONTRACT_S  # 2 s
IDLE_WARMUP_S, QUICK_IDLE_WARMUP_S = 3.0, 1.0
IDLE_WINDOW_S, QUICK_IDLE_WINDOW_S = 40.0, 2.0  # 40 s: a tick is 0.025 %, fine enough to judge 0.25 %

# Memory over many probes: cumulative probe counts at which the tree is sampled.
RSS_CHECKPOINTS, QUICK_RSS_CHECKPOINTS = (100, 1000), (5, 15)
RSS_ROWS = 20  # rows of the small source
RSS_CLAIM_S = 0.2
RSS_PER_PROBE_S = 1.5  # a batch may take this long per probe (the node's take about 0.25 s each)

# Heartbeat while a probe runs flat out.
BUSY_HEARTBEAT_S, QUICK_BUSY_HEARTBEAT_S = 1.0, 0.5
BUSY_ROWS, QUICK_BUSY_ROWS = 100000, 30000
BUSY_PROBE_TIMEOUT_S, QUICK_BUSY_PROBE_TIMEOUT_S = 3.0, 1.0
BUSY_STEADY_BEATS = 2  # beats seen before the probe is queued

# Stop latency.
PHASES = ("idle", "acquisition wait", "probe child", "report held")
DEFAULT_TRIALS, QUICK_TRIALS = 5, 1
STOP_BOUND_S, QUICK_STOP_BOUND_S = 3.0, 1.0  # a node not gone this long after SIGTERM is killed
GIVE_UP_AFTER, QUICK_GIVE_UP_AFTER = 2, 1  # trials with no exit before a phase is given up for a program
STOP_REACH_S = 3 * SHORT_TIMEOUT_S  # a phase not begun this long after the start is "not reached"
STOP_CLAIM_S = CLAIM_POLL_CONTRACT_S
STOP_HEARTBEAT_S = HEARTBEAT_CONTRACT_S
STOP_SETTLE_S = 0.3  # after the phase began, time for the node to block in it
STOP_CHILD_ROWS = 40000  # the probe-child phase's source: its child works for seconds
REPORT_HOLD_S = 0.5  # the control plane holds every report's answer this long
# The probe-child trigger: a leaf of the tree that existed when the download ended and has
# burnt this much CPU since, or a new leaf that has burnt CHILD_NEW_CPU_S in all (more than a
# fresh interpreter's start, about 0.25 s for the node: a warm pool's refill is not the probe).
CHILD_BUSY_CPU_S = 0.1
CHILD_NEW_CPU_S = 0.6
TRIGGER_POLL_S = 0.02

# Settling: the tree is quiet when it used less than QUIET_SHARE of a core over QUIET_WINDOW_S.
QUIET_WINDOW_S = 0.2
QUIET_SHARE = 0.25  # a warm pool's refill is a whole core; polling every 0.2 s a few %
SETTLE_MAX_S = 3.0
LATE_BODY_S = 0.030  # a request body this long after its head waited for an ACK (see late_bodies)
REPORT_POLL_S = 0.25  # how often a long batch's last report is looked for (a cheap poll)
RUN_END_TIMEOUT_S = SHORT_TIMEOUT_S  # a closed session's node has exited within this

# The budgets (ARCHITECTURE.md "long-lived workers"; contract SESSION-NODE-4, SESSION-STOP-5).
BUDGET_LATENCY_MEDIAN_S = 0.025
BUDGET_FIRST_PROBE_S = 0.100  # the first probe of a source: its rows read once, before the answer (D51)
BUDGET_LATENCY_P99_S = 0.150
BUDGET_IDLE_SHARE = 0.0025  # issue 23: an idle session's claim is a request, not a handshake (D53)
BUDGET_RSS_GROWTH_BYTES = 2 * MiB
BUDGET_STOP_MEDIAN_S = 0.100
ANSWERED_AT_ONCE = ("idle", "acquisition wait", "probe child")  # phases whose budget is signal to exit

# The fixed words of the report (the unit test relies on them).
TITLE_LATENCY = "Probe latency: claim answer sent -> result report received"
TITLE_IDLE = "Idle polling: CPU of the whole process tree"
TITLE_RSS = "Memory over many probes: the process tree from /proc"
TITLE_HEARTBEAT = "Heartbeat while a probe runs flat out"
TITLE_STOP = "Stop latency: SIGTERM as PID 1 -> exit"
TITLE_BUDGETS = "Budgets of the session worker"
TABLE_TITLES = (TITLE_LATENCY, TITLE_IDLE, TITLE_RSS, TITLE_HEARTBEAT, TITLE_STOP, TITLE_BUDGETS)
HEADERS = {
    "latency": ["program", "ok", "median ms", "p99 ms", "min ms", "max ms", "first ms", "to download end ms",
                "late POST bodies", "note"],
    "idle": ["program", "CPU-s", "% of one core", "claims", "heartbeats", "connections", "full TLS", "processes",
             "note"],
    "rss": ["program", "checkpoint", "peak MiB", "RSS MiB", "processes", "probes/s", "note"],
    "heartbeat": ["program", "probe s", "report", "beats", "gaps s", "max |gap - interval|", "note"],
    "stop": ["phase", "program", "exited", "median ms", "p95 ms", "max ms", "late POST bodies", "verdicts"],
}
FIGURES = ("latency", "idle", "rss", "heartbeat")


# ---------------------------------------------------------------- the plane

class BenchPlane(SessionPlane):
    """The session plane with the bench's environment: the node's own warm pool, the
    variables a figure sets (`bench_env`), and no Watch sampling the run."""

    def __init__(self, ctx, bench_env=None, **options):
        self.bench_env = dict(bench_env or {})
        super().__init__(ctx, **options)

    def env(self, mode="job", port=None, scratch=None):
        env = super().env(mode, port, scratch)
        for name in PLANE_LOWERED:
            env.pop(name, None)
        env.update(self.bench_env)
        return env

    def start(self, *args, **kwargs):
        proc = super().start(*args, **kwargs)
        self.runs[-1].watch.stop()  # see the module docstring
        return proc


class BenchContext(core.Context):
    """core.Context, with one session plane at a time for a given program."""

    def __init__(self):
        super().__init__("conformance-bench-session-")

    def new_plane(self, program, **options):
        self.argv = program.argv
        return BenchPlane(self, **options)


def end_run(plane):
    """Close the session, wait for the node's exit (killed when it does not), close the fakes."""
    try:
        if plane.proc is not None and plane.proc.running():
            plane.close_session()
            plane.wait(RUN_END_TIMEOUT_S)
    finally:
        try:
            if plane.proc is not None and plane.proc.running():
                plane.proc.kill()
        finally:
            plane.close()


# ---------------------------------------------------------------- sources and probes

def latency_rows(content_bytes=LATENCY_SOURCE_BYTES):
    """Rows whose content (CRAWLER-RESULT-10 JSON lines) is about content_bytes."""
    rows, size, index = [], 0, 0
    while size < content_bytes:
        row = ["r%07d" % index, "abcdefghijklmnopqrstuvwxyz"[index % 26:] + "0123456789", index * 7, index % 2 == 0]
        size += len(json.dumps(row, separators=(",", ":"))) + 1
        rows.append(row)
        index += 1
    return ["key", "text", "number", "flag"], rows


def busy_expression():
    """An expression every row evaluates in full: four conjunctions of 13 true comparisons
    and one false one, under an `or` (61 predicates of the 64 allowed, 56 comparisons a row)."""
    def conjunction():
        return {"op": "and", "args": [{"op": "ge", "column": "a", "value": -j} for j in range(13)]
                + [{"op": "lt", "column": "b", "value": 0}]}
    return {"aggregate": "count", "where": {"op": "or", "args": [conjunction() for _ in range(4)]}}


def busy_source(plane, rows):
    return plane.add_source(columns=["a", "b"], rows=[[i, i % 1000] for i in range(rows)])


def busy_probe(plane, source, rows):
    return plane.probe("evaluate_expression", source, scan_rows=min(rows, 100000), expression=busy_expression())


# ---------------------------------------------------------------- /proc

def _stat(pid):
    """(state, ppid, CPU seconds, start time in ticks) of pid, or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid, encoding="ascii", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        ticks = float(os.sysconf("SC_CLK_TCK"))
        return fields[0], int(fields[1]), (int(fields[11]) + int(fields[12])) / ticks, int(fields[19])
    except (OSError, ValueError, IndexError):
        return None


def tree(pid):
    """{pid: (CPU s, start ticks, leaf)} of pid and every live descendant (zombies left out)."""
    found = {}
    for member in [pid] + descendants(pid):
        stat = _stat(member)
        if stat is not None and stat[0] not in ("Z", "X"):
            found[member] = stat
    parents = set(stat[1] for stat in found.values())
    return dict((member, (stat[2], stat[3], member not in parents)) for member, stat in found.items())


def tree_memory(pid):
    """(sum of VmHWM, sum of VmRSS, processes) in bytes over pid and every live descendant."""
    peak = resident = count = 0
    for member in [pid] + descendants(pid):
        values = {}
        try:
            with open("/proc/%d/status" % member, encoding="ascii", errors="replace") as handle:
                for line in handle:
                    name, _, rest = line.partition(":")
                    if name in ("VmHWM", "VmRSS"):
                        values[name] = int(rest.split()[0]) * 1024
        except (OSError, ValueError, IndexError):
            continue
        if values:
            peak += values.get("VmHWM", 0)
            resident += values.get("VmRSS", 0)
            count += 1
    return peak, resident, count


def settle(proc, limit_s=SETTLE_MAX_S):
    """Wait (at most limit_s) until the tree used under QUIET_SHARE of a core over QUIET_WINDOW_S."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and proc.running():
        use = measure_cpu(proc, QUIET_WINDOW_S)
        if use is None or use.share < QUIET_SHARE:
            return


# ---------------------------------------------------------------- statistics

def percentile(values, share):
    """The nearest-rank percentile (share 0.99: p99) of values, or None."""
    ordered = sorted(values)
    if not ordered:
        return None
    return ordered[max(0, int(math.ceil(share * len(ordered))) - 1)]


def heartbeat_gaps(beats, start, end):
    """(gaps, open) of the heartbeats around one probe [start, end]: the gaps between the
    last beat at or before start, every beat within, and the first at or after end. Without a
    beat before start the first gap counts from start; without one after end the last gap is
    open, counted to end: both are lower bounds of the real gap."""
    beats = sorted(beats)
    before = [t for t in beats if t <= start]
    inside = [t for t in beats if start < t < end]
    after = [t for t in beats if t >= end]
    series = (before[-1:] or [start]) + inside + (after[:1] or [end])
    return [round(b - a, 4) for a, b in zip(series, series[1:])], not after


def max_deviation(gaps, interval):
    return max(abs(gap - interval) for gap in gaps) if gaps else None


# ---------------------------------------------------------------- the figures of one program

def measure_latency(ctx, program, probes):
    """N probes on a 1 MiB source, one at a time: their latencies and outcomes."""
    plane = ctx.new_plane(program, heartbeat_s=LATENCY_HEARTBEAT_S, claim_poll_s=LATENCY_CLAIM_S,
                          lifetime_s=LIFETIME_S)
    record = {"program": program.name, "probes": []}
    try:
        columns, rows = latency_rows()
        source = plane.add_source(columns=columns, rows=rows)
        record["content_bytes"] = len(source.bundle.content)
        proc = plane.start()
        plane.wait_claims(1)
        settle(proc)
        for _ in range(probes):
            probe_id = plane.probe("sample_rows", source)
            try:
                report = plane.wait_report(probe_id)
            except HarnessError as exc:  # what was measured so far stays
                record["error"] = _short(exc)
                break
            handed = [c for c in plane.control.claims() if (c.probe or {}).get("probe_id") == probe_id
                      and c.exchange.t_answer is not None]
            sent = handed[-1].exchange.t_answer
            received = report.exchange.t_body_done or report.exchange.t_start
            doc = report.doc or {}
            gets = [ex.t_end for ex in plane.store.transcript
                    if ex.method == "GET" and ex.t_end is not None and sent <= ex.t_start <= received]
            record["probes"].append({"latency_s": round(received - sent, 5), "outcome": doc.get("outcome"),
                                     "failure_code": doc.get("failure_code"),
                                     "downloaded_s": round(max(gets) - sent, 5) if gets else None})
            settle(proc)
    finally:
        end_run(plane)
        record["posts"], record["late_posts"], record["late_max_s"] = late_bodies(plane)
    return record


def late_bodies(plane):
    """(POSTs, POSTs whose body arrived LATE_BODY_S or more after their head, the latest) at the
    control plane: a client that sends head and body in two writes without TCP_NODELAY waits for
    the server's delayed ACK (about 40 ms on Linux) before the body goes out."""
    waits = [ex.t_body_done - ex.t_start for ex in plane.control.transcript
             if ex.method == "POST" and ex.t_body_done is not None]
    late = [w for w in waits if w >= LATE_BODY_S]
    return len(waits), len(late), round(max(late), 4) if late else None


def measure_idle(ctx, program, warmup_s, window_s):
    """CPU of the tree over window_s while it polls an empty queue (claim 1 s, heartbeat 2 s)."""
    plane = ctx.new_plane(program, heartbeat_s=IDLE_HEARTBEAT_S, claim_poll_s=IDLE_CLAIM_S, lifetime_s=LIFETIME_S)
    try:
        proc = plane.start()
        plane.wait_claims(1)
        time.sleep(warmup_s)
        t0 = time.monotonic()
        use = measure_cpu(proc, window_s)
        t1 = time.monotonic()
        if use is None:
            raise HarnessError("the program exited while it should have been polling")
        claims = sum(1 for c in plane.control.claims() if t0 <= c.t <= t1)
        beats = sum(1 for c in plane.control.heartbeats() if t0 <= c.t <= t1)
        # what the calls cost in connections (D53): the control plane's count over the same window
        opened = [r for r in plane.control.server.connections if t0 <= r.t_accept <= t1]
        return {"program": program.name, "cpu_s": round(use.cpu_s, 3), "wall_s": round(use.wall_s, 3),
                "share": use.share, "processes": use.processes, "claims": claims, "heartbeats": beats,
                "connections": len(opened), "full_handshakes": sum(1 for r in opened if r.tls_resumed is False),
                "claim_interval_s": IDLE_CLAIM_S, "heartbeat_interval_s": IDLE_HEARTBEAT_S}
    finally:
        end_run(plane)


def _wait_settled(plane, probe_id, timeout_s):
    """Wait until probe_id's report was answered: polled cheaply (a long run's transcript is
    long, and plane.wait_report re-reads it at every event)."""
    deadline = time.monotonic() + timeout_s
    while True:
        if any(c.status is not None for c in plane.control.reports(probe_id)):
            return
        if not plane.proc.running():
            raise HarnessError("the program exited before probe %d's report" % len(plane.control.handed_probes()))
        if time.monotonic() > deadline:
            raise HarnessError("%d probes reported within %.0f s" % (len(plane.control.reports()), timeout_s))
        time.sleep(REPORT_POLL_S)


def measure_rss(ctx, program, checkpoints):
    """Small probes back to back; the tree's memory at each checkpoint."""
    plane = ctx.new_plane(program, heartbeat_s=IDLE_HEARTBEAT_S, claim_poll_s=RSS_CLAIM_S, lifetime_s=LIFETIME_S)
    record = {"program": program.name, "checkpoints": []}
    try:
        source = plane.add_source(columns=["k", "v"], rows=[["r%d" % i, i] for i in range(RSS_ROWS)])
        proc = plane.start()
        plane.wait_claims(1)
        settle(proc)
        done, busy_s = 0, 0.0
        for target in checkpoints:
            started = time.monotonic()
            ids = [plane.probe("sample_rows", source) for _ in range(target - done)]
            _wait_settled(plane, ids[-1], RSS_PER_PROBE_S * len(ids) + SHORT_TIMEOUT_S)
            busy_s += time.monotonic() - started  # the probes' time: settling and sampling left out
            done = target
            settle(proc)
            peak, resident, count = tree_memory(proc.host_pid)
            record["checkpoints"].append({"probes": target, "peak_bytes": peak, "rss_bytes": resident,
                                          "processes": count, "elapsed_s": round(busy_s, 2)})
            log("memory: %s, %d probes in %.0f s" % (program.name, target, busy_s))
        record["succeeded"] = sum(1 for c in plane.control.reports() if c.status == 200
                                  and (c.doc or {}).get("outcome") == "succeeded")
    finally:
        end_run(plane)
    return record


def measure_heartbeat(ctx, program, interval_s, rows, probe_timeout_s):
    """The heartbeat gaps around one probe whose child burns CPU until its timeout."""
    plane = ctx.new_plane(program, heartbeat_s=interval_s, claim_poll_s=LATENCY_CLAIM_S, lifetime_s=LIFETIME_S,
                          bench_env={PROBE_TIMEOUT_ENV: env_number(probe_timeout_s)})
    try:
        source = busy_source(plane, rows)
        plane.start()
        plane.wait_claims(1)
        plane.wait_heartbeats(BUSY_STEADY_BEATS)
        probe_id = busy_probe(plane, source, rows)
        report = plane.wait_report(probe_id, timeout=probe_timeout_s + 3 * SHORT_TIMEOUT_S)
        handed = [c for c in plane.control.claims() if (c.probe or {}).get("probe_id") == probe_id]
        start = handed[-1].exchange.t_answer
        end = report.exchange.t_start
        # a beat after the report closes the last gap (a node that stopped beating leaves it open)
        plane.control.wait_calls("heartbeat", len(plane.control.heartbeats()) + 1, 2 * interval_s + 1.0)
        beats = [c.t for c in plane.control.heartbeats()]
        gaps, opened = heartbeat_gaps(beats, start, end)
        doc = report.doc or {}
        return {"program": program.name, "interval_s": interval_s, "probe_s": round(end - start, 3),
                "outcome": doc.get("outcome"), "failure_code": doc.get("failure_code"),
                "beats": sum(1 for t in beats if start < t < end), "gaps_s": gaps, "open": opened,
                "max_deviation_s": max_deviation(gaps, interval_s)}
    finally:
        end_run(plane)


def env_number(seconds):
    """A number as the node's environment takes it ([0-9]+(.[0-9]+)?)."""
    return ("%.3f" % seconds).rstrip("0").rstrip(".")


# ---------------------------------------------------------------- stop trials

def _first_answered(plane, verb, status):
    return any(c.status == status and c.exchange.t_answer is not None for c in plane.control.calls(verb))


def _child_busy(plane):
    """The probe-child trigger (see CHILD_BUSY_CPU_S)."""
    state = {}

    def condition():
        proc = plane.proc
        if "base" not in state:
            if not any(ex.method == "GET" and ex.status == 200 and ex.t_end is not None
                       for ex in plane.store.transcript):
                return False
            state["base"] = tree(proc.host_pid)
            return False
        for pid, (cpu, start, leaf) in tree(proc.host_pid).items():
            if not leaf:
                continue
            before = state["base"].get(pid)
            if before is not None and before[1] == start:
                if cpu - before[0] >= CHILD_BUSY_CPU_S:
                    return True
            elif cpu >= CHILD_NEW_CPU_S:
                return True
        return False
    return condition


def _polled(condition, plane):
    def reached(timeout_s):
        deadline = time.monotonic() + timeout_s
        while not condition():
            if not plane.proc.running() or time.monotonic() > deadline:
                return condition()
            time.sleep(TRIGGER_POLL_S)
        return True
    return reached


def arrange_stop(ctx, program, phase):
    """(plane, reached, settle seconds) of one phase."""
    options = dict(heartbeat_s=STOP_HEARTBEAT_S, claim_poll_s=STOP_CLAIM_S, lifetime_s=LIFETIME_S)
    if phase == "idle":
        plane = ctx.new_plane(program, **options)
        condition, settle_s = (lambda: _first_answered(plane, "claim", 200)), STOP_SETTLE_S
    elif phase == "acquisition wait":
        plane = ctx.new_plane(program, **options)
        source = plane.add_source(rows=[["x", 1]], ready_after_reads=None)  # never ready: the node polls
        plane.probe("sample_rows", source)
        condition, settle_s = (lambda: _first_answered(plane, "acquire", 201)), STOP_SETTLE_S
    elif phase == "probe child":
        plane = ctx.new_plane(program, **options)
        busy_probe(plane, busy_source(plane, STOP_CHILD_ROWS), STOP_CHILD_ROWS)
        condition, settle_s = _child_busy(plane), 0.0
    elif phase == "report held":
        plane = ctx.new_plane(program, **options)
        plane.probe("sample_rows", plane.add_source(rows=[["x", 1]]))
        plane.control.add_fault(faults.delay(REPORT_HOLD_S), plane.control.report_match(phase="response"))
        condition, settle_s = (lambda: any(c.status is not None for c in plane.control.reports())), 0.0
    else:
        raise ValueError("unknown phase %r" % phase)
    return plane, _polled(condition, plane), settle_s


def stop_trial(ctx, program, phase, bound_s):
    """One SIGTERM in `phase`: its record (core.stop_trial's, with the phase and the program)."""
    plane, reached, settle_s = arrange_stop(ctx, program, phase)
    try:
        record, result = core.stop_trial(plane, reached, bound_s, settle_s=settle_s, reach_timeout_s=STOP_REACH_S)
        record.update(program=program.name, phase=phase)
        if result is None and plane.result is not None and not plane.result.timed_out:
            record["verdict"] = "exited (exit %s) before the phase" % plane.result.exit_code
        if phase != "idle" and result is not None and result.t_signal is not None:
            # SESSION-STOP-3: the probe in flight is still answered; its report shows where the stop cut it
            reports = [c.doc or {} for c in plane.control.reports() if c.status is not None]
            record["report"] = (reports[-1].get("failure_code") or reports[-1].get("outcome")) if reports else None
            if record["latency_s"] is not None:
                record["verdict"] += ", report %s" % (record["report"] or "none")
        if result is not None and result.t_signal is not None:
            waits = [ex.t_body_done - ex.t_start for ex in plane.control.transcript
                     if ex.method == "POST" and ex.t_body_done is not None and ex.t_start >= result.t_signal]
            record["posts_after_signal"] = len(waits)
            record["late_posts_after_signal"] = sum(1 for w in waits if w >= LATE_BODY_S)
        if phase == "report held" and result is not None and record["latency_s"] is not None:
            answers = [c.exchange.t_answer for c in plane.control.reports() if c.exchange.t_answer is not None]
            answered = max(answers) if answers else None
            if answered is not None and answered > result.t_signal:
                record["latency_s"] = round(result.t_exit - answered, 4)
                record["answer_after_signal_s"] = round(answered - result.t_signal, 4)
        return record
    except HarnessError as exc:
        return {"program": program.name, "phase": phase, "latency_s": None, "killed": False, "exit_code": None,
                "verdict": "harness: %s" % _short(exc)}
    finally:
        end_run(plane)


def _short(exc, limit=160):
    text = " ".join(str(exc).split())
    text = text[len("bench: "):] if text.startswith("bench: ") else text  # core.Context.fail's prefix
    return text if len(text) <= limit else text[:limit - 3] + "..."


# ---------------------------------------------------------------- budgets

def budget_rows(figures, node, quick=False):
    """[(figure, budget, this run, met)] for the node; met None on a quick run or without a figure."""
    suffix = " (--quick)" if quick else ""
    rows = []

    def judged(ok):
        return None if quick or ok is None else ok

    lat = figures["latency"].get(node) or {}
    median, p99 = lat.get("median_s"), lat.get("p99_s")
    rows.append(("probe latency median, 1 MiB source" + suffix, "<= %.0f ms" % (BUDGET_LATENCY_MEDIAN_S * 1000),
                 _ms_text(median, lat), judged(None if median is None else median <= BUDGET_LATENCY_MEDIAN_S)))
    rows.append(("probe latency p99, 1 MiB source" + suffix, "<= %.0f ms" % (BUDGET_LATENCY_P99_S * 1000),
                 _ms_text(p99, lat), judged(None if p99 is None else p99 <= BUDGET_LATENCY_P99_S)))
    idle = figures["idle"].get(node) or {}
    share = idle.get("share")
    rows.append(("idle CPU, claim interval 1 s" + suffix, "<= %.2f %% of one core" % (BUDGET_IDLE_SHARE * 100),
                 "n/a" if share is None else "%.2f %%" % (share * 100),
                 judged(None if share is None else share <= BUDGET_IDLE_SHARE)))
    rss = figures["rss"].get(node) or {}
    growth = rss.get("peak_growth_bytes")
    span = rss.get("span")
    rows.append(("peak RSS growth, probe %s" % (span or "?") + suffix,
                 "<= %.0f MiB" % (BUDGET_RSS_GROWTH_BYTES / MiB),
                 "n/a" if growth is None else "%+.2f MiB" % (growth / MiB),
                 judged(None if growth is None else growth <= BUDGET_RSS_GROWTH_BYTES)))
    beat = figures["heartbeat"].get(node) or {}
    deviation, interval = beat.get("max_deviation_s"), beat.get("interval_s")
    limit = tolerance(interval) if interval else None
    rows.append(("heartbeat max |gap - interval| while a probe burns CPU" + suffix,
                 "<= %s (interval %s)" % ("?" if limit is None else "%.2f s" % limit,
                                          "?" if interval is None else "%g s" % interval),
                 "n/a" if deviation is None else "%.3f s" % deviation,
                 judged(None if deviation is None or limit is None else deviation <= limit)))
    stop = figures["stop"]
    medians = [(phase, (stop.get(phase) or {}).get(node, {}).get("median_s")) for phase in ANSWERED_AT_ONCE]
    known = [(p, m) for p, m in medians if m is not None]
    worst = max(known, key=lambda item: item[1]) if known else None
    missing = [p for p, m in medians if m is None]
    rows.append(("stop latency median: idle, acquisition wait, probe child" + suffix,
                 "<= %.0f ms each" % (BUDGET_STOP_MEDIAN_S * 1000),
                 ("worst %.0f ms (%s)" % (worst[1] * 1000, worst[0]) if worst else "n/a")
                 + ("; no exit in %s" % ", ".join(missing) if missing and worst else ""),
                 judged(None if not known else (not missing and worst[1] <= BUDGET_STOP_MEDIAN_S))))
    held = (stop.get("report held") or {}).get(node, {}).get("median_s")
    rows.append(("stop latency median, report held %.1f s, from its answer" % REPORT_HOLD_S + suffix,
                 "<= %.0f ms" % (BUDGET_STOP_MEDIAN_S * 1000), "n/a" if held is None else "%.0f ms" % (held * 1000),
                 judged(None if held is None else held <= BUDGET_STOP_MEDIAN_S)))
    first = lat.get("first_s")
    rows.append(("first probe of a 1 MiB source" + suffix, "<= %.0f ms" % (BUDGET_FIRST_PROBE_S * 1000),
                 "n/a" if first is None else "%.0f ms" % (first * 1000),
                 judged(None if first is None else first <= BUDGET_FIRST_PROBE_S)))
    return rows


def _ms_text(value, lat):
    if value is None:
        return "n/a"
    return "%.0f ms (%d probes)" % (value * 1000, lat.get("ok", 0))


# ---------------------------------------------------------------- the bench

class Bench(core.ContractBench):
    """The session worker beside a comparison node: latency, idle CPU, memory, heartbeat, stops."""

    DESCRIPTION = ("Measure a session worker beside a comparison node: probe latency, idle CPU, memory over many "
                   "probes, heartbeat under load, stop latency per phase.")
    DEFAULT_NODE = DEFAULT_NODE
    REPS, QUICK_REPS, REPS_HELP = 1, 1, "repetitions (one run per figure and program; kept for the common options)"
    TRIALS, QUICK_TRIALS, TRIALS_HELP = DEFAULT_TRIALS, QUICK_TRIALS, "stop trials per phase and program"
    QUICK_HELP = "few probes, short windows, one stop trial per phase: a smoke run (~15 s a program)"
    SCHEMA = "conformance-bench-session/1"
    BUDGETS_TITLE = TITLE_BUDGETS
    EXAMPLES = ("--quick", "--vs my_worker.py --json bench-session.json")

    @classmethod
    def add_arguments(cls, parser):
        parser.add_argument("--vs", metavar="PATH", default=None,
                            help="comparison node (default %s when it exists; an absent or failing one shows n/a)"
                            % DEFAULT_VS)
        parser.add_argument("--probes", metavar="N", type=positive_int,
                            help="latency probes per program (default %d; %d with --quick)"
                            % (LATENCY_PROBES, QUICK_LATENCY_PROBES))

    @classmethod
    def from_options(cls, options):
        node = core.program(options.node)
        vs, vs_note = find_vs(options.vs)
        if vs is not None and vs.name == node.name:
            vs.name += " (vs)"
        return cls(node, vs, options.quick, options.trials, vs_note=vs_note, probes=options.probes)

    def __init__(self, node, vs, quick, trials, vs_note=None, probes=None):
        self.node, self.vs, self.quick, self.trials, self.vs_note = node, vs, quick, trials, vs_note
        self.probes = probes or (QUICK_LATENCY_PROBES if quick else LATENCY_PROBES)
        self.idle_warmup_s, self.idle_window_s = (QUICK_IDLE_WARMUP_S, QUICK_IDLE_WINDOW_S) if quick else \
            (IDLE_WARMUP_S, IDLE_WINDOW_S)
        self.checkpoints = QUICK_RSS_CHECKPOINTS if quick else RSS_CHECKPOINTS
        self.busy = (QUICK_BUSY_HEARTBEAT_S, QUICK_BUSY_ROWS, QUICK_BUSY_PROBE_TIMEOUT_S) if quick else \
            (BUSY_HEARTBEAT_S, BUSY_ROWS, BUSY_PROBE_TIMEOUT_S)
        self.bound_s, self.give_up_after = (QUICK_STOP_BOUND_S, QUICK_GIVE_UP_AFTER) if quick else \
            (STOP_BOUND_S, GIVE_UP_AFTER)
        self.raw = dict((name, {}) for name in FIGURES)
        self.stop_runs = []

    def programs(self):
        return [p for p in (self.node, self.vs) if p is not None]

    def names(self):
        return [self.node.name] + [self.vs.name if self.vs is not None else "vs"]

    def run(self):
        log("%s vs %s: %d latency probes, idle %g s, memory at %s probes, %d stop trial(s) per phase" % (
            self.node.name, self.vs.name if self.vs else "nothing (%s)" % self.vs_note, self.probes,
            self.idle_window_s, "/".join(str(c) for c in self.checkpoints), self.trials))
        ctx = BenchContext()
        try:
            for figure, measure in (
                    ("latency", lambda p: measure_latency(ctx, p, self.probes)),
                    ("idle", lambda p: measure_idle(ctx, p, self.idle_warmup_s, self.idle_window_s)),
                    ("heartbeat", lambda p: measure_heartbeat(ctx, p, *self.busy)),
                    ("rss", lambda p: measure_rss(ctx, p, self.checkpoints))):
                for program in self.programs():
                    started = time.monotonic()
                    try:
                        self.raw[figure][program.name] = measure(program)
                    except Exception as exc:  # HarnessError, or a program's answer the bench cannot read
                        self.raw[figure][program.name] = {"program": program.name, "error": _short(exc)}
                    log("%s: %s in %.0f s" % (figure, program.name, time.monotonic() - started))
            groups = [(phase, [(phase, p) for p in self.programs()]) for phase in PHASES]
            self.stop_runs += core.stop_trials(groups, self.trials, lambda case: stop_trial(
                ctx, case[1], case[0], self.bound_s), give_up_after=self.give_up_after)
        finally:
            ctx.close()

    # -- figures

    def figures(self):
        out = dict((name, {}) for name in FIGURES)
        for program in self.programs():
            name = program.name
            out["latency"][name] = latency_figure(self.raw["latency"].get(name))
            out["idle"][name] = dict(self.raw["idle"].get(name) or {"error": "not run"})
            out["rss"][name] = rss_figure(self.raw["rss"].get(name))
            out["heartbeat"][name] = dict(self.raw["heartbeat"].get(name) or {"error": "not run"})
        stop = {}
        for phase in PHASES:
            stop[phase] = {}
            for program in self.programs():
                trials = [r for r in self.stop_runs if r["phase"] == phase and r["program"] == program.name]
                stop[phase][program.name] = dict(core.stop_summary(trials, self.trials),
                                                 posts=sum(r.get("posts_after_signal", 0) for r in trials),
                                                 late_posts=sum(r.get("late_posts_after_signal", 0) for r in trials))
        out["stop"] = stop
        return out

    def budgets(self, figures, wall_s):
        return budget_rows(figures, self.node.name, self.quick)

    def render(self, figures, wall_s):
        return render(self, figures)

    def options(self):
        return {"vs": self.vs.path if self.vs else None, "latency_probes": self.probes,
                "latency_source_bytes": LATENCY_SOURCE_BYTES, "latency_claim_s": LATENCY_CLAIM_S,
                "idle_warmup_s": self.idle_warmup_s, "idle_window_s": self.idle_window_s,
                "idle_claim_s": IDLE_CLAIM_S, "idle_heartbeat_s": IDLE_HEARTBEAT_S,
                "rss_checkpoints": list(self.checkpoints), "busy_heartbeat_s": self.busy[0],
                "busy_rows": self.busy[1], "busy_probe_timeout_s": self.busy[2], "stop_bound_s": self.bound_s,
                "report_hold_s": REPORT_HOLD_S}

    def document(self):
        return {"vs": self.vs.path if self.vs else None, "vs_note": self.vs_note,
                "names": {"node": self.node.name, "vs": self.vs.name if self.vs else None},
                "runs": self.raw, "stop_trials": self.stop_runs}

    def exit_status(self, figures):
        """1 when one of the node's figures could not be measured."""
        node = self.node.name
        missing = [name for name in FIGURES if "error" in (figures[name].get(node) or {"error": 1})]
        return 1 if missing else 0


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError("must be an integer of at least 1")
    return value


def find_vs(path):
    """(Program or None, why none): the comparison node. The default is used when it exists."""
    if path is None:
        path = DEFAULT_VS
        if not os.path.isfile(os.path.join(core.ROOT, path)) and not os.path.isfile(path):
            return None, "%s absent" % path
    if path == "":
        return None, "none asked for"
    try:
        return core.program(path), None
    except SystemExit:
        return None, "%s absent" % path


def latency_figure(raw):
    if not raw or "error" in raw and not raw.get("probes"):
        return {"error": (raw or {}).get("error", "not run")}
    good = [p["latency_s"] for p in raw["probes"] if p["outcome"] == "succeeded"]
    failures = sorted(set(p["failure_code"] or p["outcome"] or "no outcome" for p in raw["probes"]
                          if p["outcome"] != "succeeded"))
    first = raw["probes"][0] if raw["probes"] else {}
    figure = {"ok": len(good), "asked": len(raw["probes"]), "failures": failures,
              "first_s": first.get("latency_s") if first.get("outcome") == "succeeded" else None,
              "content_bytes": raw.get("content_bytes"),
              "median_s": statistics.median(good) if good else None, "p99_s": percentile(good, 0.99),
              "min_s": min(good) if good else None, "max_s": max(good) if good else None,
              "downloaded_median_s": _median([p.get("downloaded_s") for p in raw["probes"]
                                              if p["outcome"] == "succeeded"]),
              "posts": raw.get("posts"), "late_posts": raw.get("late_posts"), "late_max_s": raw.get("late_max_s")}
    if not good:
        figure["error"] = "no probe succeeded (%s)" % ", ".join(failures)
    return figure


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def rss_figure(raw):
    if not raw or "error" in raw:
        return {"error": (raw or {}).get("error", "not run")}
    points = raw["checkpoints"]
    first, last = points[0], points[-1]
    elapsed = last["elapsed_s"]
    return {"checkpoints": points, "succeeded": raw.get("succeeded"),
            "span": "%d -> %d" % (first["probes"], last["probes"]),
            "peak_growth_bytes": last["peak_bytes"] - first["peak_bytes"],
            "rss_growth_bytes": last["rss_bytes"] - first["rss_bytes"],
            "probes_per_s": last["probes"] / elapsed if elapsed else None}


# ---------------------------------------------------------------- report

def _ms(value):
    return "n/a" if value is None else "%.0f" % (value * 1000)


def _na(figure):
    return "n/a: %s" % figure.get("error", "not measured")


def render(bench, figures):
    """The report's lines down to the stop table (core adds the budget table and the footer)."""
    caps = capabilities()
    node, vs = bench.node, bench.vs
    out = ["make bench-session: node %s (%s), vs %s; %s cores; %s%s" % (
        node.name, node.path, "%s (%s)" % (vs.name, vs.path) if vs else "n/a (%s)" % bench.vs_note,
        os.cpu_count(), "PID 1" if caps.pid1 else "not PID 1 (%s)" % caps.pid1.reason,
        "; --quick" if bench.quick else ""), ""]
    names = [p.name for p in bench.programs()]
    absent = [] if vs else [["vs", "n/a (%s)" % bench.vs_note]]

    def pad(row, width):
        return row + [""] * (width - len(row))

    lat_size = next((f.get("content_bytes") for f in figures["latency"].values() if f.get("content_bytes")), None)
    out.append("%s, sample_rows on a %s source, %d probe(s) one at a time, claim interval %g s" % (
        TITLE_LATENCY, "%.2f MiB" % (lat_size / MiB) if lat_size else "1 MiB", bench.probes, LATENCY_CLAIM_S))
    rows = []
    for name in names:
        f = figures["latency"][name]
        if f.get("median_s") is None:
            rows.append(pad([name, "%d/%d" % (f.get("ok", 0), f.get("asked", 0)) if "asked" in f else "-"], 9)
                        + [_na(f)])
            continue
        note = "failed: %s" % ", ".join(f["failures"]) if f["failures"] else ""
        late = "n/a" if f.get("posts") is None else "%d/%d%s" % (
            f["late_posts"], f["posts"], " (max %.0f ms)" % (f["late_max_s"] * 1000) if f["late_max_s"] else "")
        rows.append([name, "%d/%d" % (f["ok"], f["asked"]), _ms(f["median_s"]), _ms(f["p99_s"]), _ms(f["min_s"]),
                     _ms(f["max_s"]), _ms(f.get("first_s")), _ms(f["downloaded_median_s"]), late, note])
    out += core.table(HEADERS["latency"], rows + [pad(r, 10) for r in absent])
    out.append("first: the first probe of the source (its first acquisition and the node's first read of its "
               "rows); to download end: median from the claim answer to the end of the source's download (the rest is "
               "the node's own work); late POST bodies: bodies that reached the control plane %.0f ms or more after "
               "their head (head and body in two writes without TCP_NODELAY wait for a delayed ACK)"
               % (LATE_BODY_S * 1000))

    out.append("")
    out.append("%s, claim interval %g s, heartbeat %g s, %g s after %g s of warm-up" % (
        TITLE_IDLE, IDLE_CLAIM_S, IDLE_HEARTBEAT_S, bench.idle_window_s, bench.idle_warmup_s))
    rows = []
    for name in names:
        f = figures["idle"][name]
        if "error" in f:
            rows.append(pad([name], 8) + [_na(f)])
            continue
        rows.append([name, "%.2f" % f["cpu_s"], "%.2f" % (f["share"] * 100), f["claims"], f["heartbeats"],
                     f.get("connections", "-"), f.get("full_handshakes", "-"), f["processes"], ""])
    out += core.table(HEADERS["idle"], rows + [pad(r, 9) for r in absent])

    out.append("")
    out.append("%s, sum over every process (peak: VmHWM, judged; RSS: VmRSS), sample_rows on a %d-row source, "
               "back to back" % (TITLE_RSS, RSS_ROWS))
    rows = []
    for name in names:
        f = figures["rss"][name]
        if "error" in f:
            rows.append(pad([name], 6) + [_na(f)])
            continue
        first_peak = f["checkpoints"][0]["peak_bytes"]
        for index, point in enumerate(f["checkpoints"]):
            last = index == len(f["checkpoints"]) - 1
            rows.append([name if index == 0 else "", "probe %d" % point["probes"], "%.1f" % (point["peak_bytes"] / MiB),
                         "%.1f" % (point["rss_bytes"] / MiB), point["processes"],
                         "%.1f" % f["probes_per_s"] if last and f["probes_per_s"] else "",
                         "growth: peak %+.2f MiB (%+.1f %%), RSS %+.2f MiB" % (
                             f["peak_growth_bytes"] / MiB, 100.0 * f["peak_growth_bytes"] / first_peak,
                             f["rss_growth_bytes"] / MiB) if last and first_peak else ""])
    out += core.table(HEADERS["rss"], rows + [pad(r, 7) for r in absent])

    out.append("")
    interval, rows_n, timeout = bench.busy
    out.append("%s: interval %g s; evaluate_expression over %d rows, probe timeout %g s" % (
        TITLE_HEARTBEAT, interval, rows_n, timeout))
    rows = []
    for name in names:
        f = figures["heartbeat"][name]
        if "error" in f:
            rows.append(pad([name], 6) + [_na(f)])
            continue
        gaps = f["gaps_s"]
        shown = ", ".join("%.2f" % g for g in gaps[:10]) + (", ..." if len(gaps) > 10 else "")
        rows.append([name, "%.2f" % f["probe_s"], f["failure_code"] or f["outcome"] or "-", f["beats"],
                     shown or "-", "n/a" if f["max_deviation_s"] is None else "%.3f s" % f["max_deviation_s"],
                     "last gap open (no beat after the report)" if f["open"] else ""])
    out += core.table(HEADERS["heartbeat"], rows + [pad(r, 7) for r in absent])

    out.append("")
    out.append("%s, %d trial(s) per phase, no exit within %g s = killed; report held %.1f s: from its answer; "
               "late POST bodies: of the POSTs sent after the signal" % (TITLE_STOP, bench.trials, bench.bound_s,
                                                                          REPORT_HOLD_S))
    rows = []
    for phase in PHASES:
        for name in names:
            s = figures["stop"][phase][name]
            verdicts = "; ".join("%d x %s" % (n, v) for v, n in sorted(s["verdicts"].items(), key=lambda kv: -kv[1]))
            if s["gave_up"]:
                verdicts += "; gave up"
            rows.append([phase, name, "%d/%d" % (s["exited"], s["trials"]), _ms(s["median_s"]), _ms(s["p95_s"]),
                         _ms(s["max_s"]), "%d/%d" % (s["late_posts"], s["posts"]), verdicts])
        if not vs:
            rows.append([phase, "vs", "-", "n/a", "n/a", "n/a", "n/a", bench.vs_note])
    out += core.table(HEADERS["stop"], rows)
    return out
