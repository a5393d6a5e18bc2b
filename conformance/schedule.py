"""The order a run starts its checks in: the longest first.

A run is a pool of ``--jobs`` workers over a few hundred checks, most under a
second, a few of ten (a deadline waited out, an expired window). Started in
selection order, a long check that comes last runs alone while the other
workers idle, and the run ends that much later; started first, its waits
overlap the short checks' work. So `order` submits the checks by their
expected duration, longest first, ties (and checks not in the table) in
selection order. Reports still list the checks in selection order.

`EXPECTED_S` holds, per contract, the checks that took at least
`LISTED_FROM_S` in a run of the reference node (default `--jobs`, 2 cores,
with ``--reference``). It only orders the run: a stale or missing entry costs
some wall time, never a verdict. To refresh it after checks change:

    python3 -m conformance step nodes/hello_node.py --reference --json /tmp/step.json   # each contract
    python3 -m conformance.schedule /tmp/step.json /tmp/crawler.json ...          # rewrites the table
"""

import json
import os
import re
import sys
import threading
import time

__all__ = ["order", "expected_s", "EXPECTED_S", "Governor"]

# A check shorter than this is not listed: among the short ones the order changes nothing.
LISTED_FROM_S = 2.0

# BEGIN TABLE (written by `python3 -m conformance.schedule REPORT.json ...`)
EXPECTED_S = {
    'crawler': {
        'upload.expired-window': 10.5,
        'upload.expired-window-bundle': 9.9,
        'stop.put-answer-lost': 8.4,
        'child.window-cap': 6.4,
        'config.base-rules': 5.7,
        'fail.best-effort': 5.0,
        'fetch.deadline': 4.9,
        'norm.malformed': 4.8,
        'upload.deadline': 4.7,
        'result.normalized': 4.6,
        'identity.deadline': 4.4,
        'boot.deadline': 4.2,
        'result.evidence': 4.2,
        'norm.limits': 4.0,
        'boot.strict-request': 3.9,
        'config.endpoints': 3.6,
        'norm.csv': 3.6,
        'result.identity': 3.6,
        'config.policy': 3.5,
        'child.refused-code': 3.4,
        'result.keys': 3.3,
        'boot.strict-response': 3.2,
        'config.timeouts': 3.1,
        'cap.query': 2.9,
        'norm.encoding': 2.9,
        'cap.keys-constants': 2.6,
        'fetch.redirect-denied': 2.6,
        'cap.forms': 2.5,
        'cap.url': 2.4,
        'child.admitted-code': 2.4,
        'identity.malformed': 2.4,
        'stop.put-answer': 2.4,
        'cap.accepted': 2.2,
        'child.timeout': 2.2,
        'result.content': 2.1,
    },
    'scan': {
        'http.reconnect': 10.3,
        'progress.never-holds-up': 8.3,
        'token.401-reread': 6.8,
        'http.upload-moving': 6.5,
        'backoff.schedule': 6.4,
        'backoff.retry-after': 6.1,
        'token.invalid-rotation': 5.6,
        'http.bounded': 5.1,
        'http.keep-alive': 4.7,
        'runner.streamed': 4.2,
        'peer.retry-after-forms': 3.9,
        'crash.churn': 3.8,
        'http.upload-stalled': 3.8,
        'output.failure-lines': 3.8,
        'peer.launch-line': 3.8,
        'backoff.no-work-wait': 3.5,
        'stop.final-flush': 3.4,
        'runner.start-gate': 3.3,
        'progress.acknowledgement': 3.2,
        'reconcile.two-strikes': 3.2,
        'runner.assignment-deadline': 3.2,
        'upload.streamed': 2.9,
        'assign.past-deadline': 2.8,
        'config.trees': 2.8,
        'config.waits': 2.8,
        'argv.parallelism': 2.7,
        'token.off-argv': 2.7,
        'secret.process-tree': 2.5,
        'claim.assignment-checked': 2.4,
        'crash.claim': 2.4,
        'peer.error-body': 2.4,
        'runner.watchdog': 2.3,
        'backoff.idle-poll': 2.2,
        'config.origin': 2.2,
        'token.form': 2.2,
        'token.rotation': 2.1,
        'claim.no-work-invalid': 2.0,
        'peer.instants': 2.0,
        'upload.receipt': 2.0,
    },
    'session': {
        'callback.deadline': 10.5,
        'backoff.schedule': 9.4,
        'claim.interval': 7.7,
        'claim.failures': 7.1,
        'callback.reconnect': 6.7,
        'stop.drain-bound': 6.3,
        'service.idle-exit': 4.9,
        'heartbeat.failures-ignored': 4.8,
        'callback.keep-alive': 4.7,
        'deadline.clock-step': 4.5,
        'heartbeat.end': 4.4,
        'acquire.ceiling': 4.3,
        'idle.cpu': 4.3,
        'deadline.idle': 4.1,
        'deadline.monitor': 4.1,
        'deadline.probe-in-flight': 4.0,
        'peer.lease-paths': 3.8,
        'backoff.retry-after': 3.4,
        'acquire.read-refusals': 3.3,
        'heartbeat.cadence': 3.3,
        'backoff.read-base': 3.1,
        'progress.append-failures': 3.1,
        'callback.allowed-paths': 2.9,
        'config.numbers': 2.8,
        'isolation.warm-pool': 2.8,
        'service.lease': 2.7,
        'callback.append-deadline': 2.4,
        'claim.one-at-a-time': 2.4,
        'heartbeat.during-probe': 2.4,
        'acquire.polling': 2.3,
        'isolation.ceiling': 2.3,
        'config.names': 2.2,
        'claim.probe-invalid': 2.1,
        'lease.intervals': 2.1,
        'claim.closed': 2.0,
    },
    'step': {
        'stream.read-timeout': 25.2,
        'stop.receipt-deadline': 20.2,
        'output.upload-silent': 10.2,
        'proxy.connect-deadline': 10.2,
        'stop.connect-deadline': 10.1,
        'work.facts-ceiling-order': 4.4,
        'result.facts-ceiling': 3.6,
        'stream.memory-flat': 3.4,
        'stream.memory-ceiling': 3.3,
        'stream.cgroup': 2.9,
        'peer.expiry-forms': 2.5,
        'stop.ack-line': 2.4,
        'progress.flushed': 2.1,
        'stop.receipt-kept': 2.1,
    },
}
# END TABLE


def expected_s(item):
    """Seconds the check is expected to take (0.0 when not listed)."""
    return EXPECTED_S.get(item.contract, {}).get(item.id, 0.0)


def order(selected):
    """The checks to submit, longest expected first; otherwise in selection order (sorted is stable)."""
    return sorted(selected, key=lambda item: -expected_s(item))


class Governor:
    """How many checks run at once: `floor` always, up to `ceiling` while this process's CPUs idle.

    Most checks wait (a deadline, a backoff, a node's poll interval) more than they compute, some
    contracts' runs are all waiting, others are CPU-bound on node starts: a fixed pool is too
    small for the first and too large for the second. So beyond `floor` a check starts only
    when the CPUs this process may use were at least ADMIT_IDLE_CPUS idle (whoever else uses
    them) over the last ADMIT_WINDOW_S, measured after the previous start: the extra checks
    fill idle time and never add to a queue of runnable processes, where the timing checks
    (stop latency, deadlines) would feel it. With floor == ceiling (an explicit --jobs) it is a
    plain pool of that size.
    """

    ADMIT_IDLE_CPUS = 0.75
    # At most one start past the floor per window. 0.5 s let a session run reach its
    # ceiling only 10 s in, the CPUs half idle meanwhile. A node starts within 0.25 s,
    # so the window after a start sees its CPU; `--repeat 2` of scan and session with a
    # busy core beside them found no check flaky at 0.25 s (2026-12-05).
    ADMIT_WINDOW_S = 0.25

    def __init__(self, floor, ceiling, idle_reader=None):
        self.floor, self.ceiling = max(1, floor), max(1, floor, ceiling)
        self._cond = threading.Condition()
        self._running = 0
        self._read = idle_reader or _cpu_times
        self._mark = None        # (monotonic time, idle, total) at the last start past the floor

    def admit(self):
        with self._cond:
            while self._running >= self.floor and not self._idle_enough():
                self._cond.wait(self.ADMIT_WINDOW_S / 2)
            self._running += 1

    def release(self):
        with self._cond:
            self._running -= 1
            self._cond.notify()

    def _idle_enough(self):
        if self._running >= self.ceiling:
            return False
        now = time.monotonic()
        if self._mark is not None and now - self._mark[0] < self.ADMIT_WINDOW_S:
            return False  # every waiting check asks; /proc/stat is read once a window
        sample = self._read()
        if sample is None:
            return False
        if self._mark is None:
            self._mark = (now,) + sample
            return False
        (_t, idle0, total0), (idle1, total1), cpus = self._mark, sample, _usable_cpus()
        self._mark = (now,) + sample
        return total1 > total0 and (idle1 - idle0) / float(total1 - total0) * cpus >= self.ADMIT_IDLE_CPUS


def _usable_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _cpu_times():
    """(idle, total) clock ticks of the CPUs this process may use, from /proc/stat; None where unknown."""
    try:
        mine = set("cpu%d" % n for n in os.sched_getaffinity(0))
        idle = total = 0
        with open("/proc/stat", encoding="ascii") as handle:
            for line in handle:
                fields = line.split()
                if fields and fields[0] in mine:
                    ticks = [int(x) for x in fields[1:9]]   # user nice system idle iowait irq softirq steal
                    idle += ticks[3] + ticks[4]
                    total += sum(ticks)
        return (idle, total) if total else None
    except (AttributeError, OSError, ValueError):
        return None


def table_from_reports(paths):
    """{contract: {check id: seconds}} of the checks that took at least LISTED_FROM_S in these --json reports."""
    table = {}
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            report = json.load(handle)
        mine = table.setdefault(report["contract"], {})
        for entry in report["checks"]:
            if entry["duration_s"] >= LISTED_FROM_S:
                mine[entry["id"]] = max(mine.get(entry["id"], 0.0), round(entry["duration_s"], 1))
    return table


def render_table(table):
    lines = ["EXPECTED_S = {"]
    for contract in sorted(table):
        lines.append("    %r: {" % contract)
        for check_id, seconds in sorted(table[contract].items(), key=lambda item: (-item[1], item[0])):
            lines.append("        %r: %.1f," % (check_id, seconds))
        lines.append("    },")
    lines.append("}")
    return "\n".join(lines)


def main(argv=None):
    paths = sys.argv[1:] if argv is None else list(argv)
    if not paths or any(p.startswith("-") for p in paths):
        sys.stderr.write("usage: python3 -m conformance.schedule REPORT.json [REPORT.json ...]\n")
        return 2
    table = dict(EXPECTED_S)
    table.update(table_from_reports(paths))  # a contract in the reports is replaced whole; the others stay
    source_path = os.path.abspath(__file__)
    with open(source_path, encoding="utf-8") as handle:
        source = handle.read()
    pattern = re.compile(r"(# BEGIN TABLE[^\n]*\n).*?(\n# END TABLE)", re.S)
    source = pattern.sub(lambda m: m.group(1) + render_table(table) + m.group(2), source, count=1)
    with open(source_path, "w", encoding="utf-8") as handle:
        handle.write(source)
    sys.stdout.write("%s: %s\n" % (os.path.relpath(source_path), ", ".join(
        "%s %d checks" % (contract, len(table[contract])) for contract in sorted(table))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
