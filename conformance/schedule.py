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
        'upload.expired-window': 10.4,
        'upload.expired-window-bundle': 9.7,
        'stop.put-answer-lost': 8.3,
        'config.base-rules': 7.4,
        'child.window-cap': 7.0,
        'cap.query': 6.2,
        'fail.best-effort': 5.4,
        'result.evidence': 5.2,
        'fetch.deadline': 5.0,
        'boot.strict-request': 4.9,
        'config.policy': 4.9,
        'cap.url': 4.7,
        'boot.deadline': 4.5,
        'identity.deadline': 4.3,
        'upload.deadline': 4.3,
        'norm.malformed': 4.2,
        'config.timeouts': 3.9,
        'cap.headers': 3.5,
        'boot.strict-response': 3.2,
        'result.normalized': 3.1,
        'cap.accepted': 2.9,
        'result.identity': 2.8,
        'norm.limits': 2.7,
        'result.keys': 2.7,
        'config.endpoints': 2.6,
        'cap.forms': 2.3,
        'child.refused-code': 2.3,
        'stop.put-answer': 2.3,
        'argv.session-canonical': 2.2,
        'child.timeout': 2.2,
        'result.content': 2.1,
    },
    'scan': {
        'progress.never-holds-up': 13.6,
        'token.401-reread': 8.8,
        'http.bounded': 8.4,
        'http.upload-moving': 7.2,
        'progress.acknowledgement': 7.0,
        'backoff.schedule': 6.8,
        'peer.launch-line': 6.4,
        'crash.claim': 6.0,
        'backoff.retry-after': 5.8,
        'runner.streamed': 5.8,
        'token.invalid-rotation': 5.7,
        'crash.churn': 5.3,
        'crash.upload': 5.1,
        'config.waits': 4.9,
        'http.upload-stalled': 4.9,
        'peer.retry-after-forms': 4.5,
        'claim.assignment-checked': 4.4,
        'output.failure-lines': 4.2,
        'crash.progress': 4.1,
        'config.trees': 4.0,
        'runner.target-pins': 3.7,
        'config.origin': 3.6,
        'peer.instants': 3.6,
        'reconcile.two-strikes': 3.5,
        'stop.final-flush': 3.5,
        'backoff.no-work-wait': 3.4,
        'runner.start-gate': 3.4,
        'peer.error-body': 3.3,
        'runner.assignment-deadline': 3.3,
        'secret.process-tree': 3.3,
        'upload.streamed': 3.2,
        'crash.scan': 3.0,
        'runner.adopt-bound': 3.0,
        'token.form': 3.0,
        'token.off-argv': 3.0,
        'claim.no-work-invalid': 2.9,
        'peer.progress-ack': 2.9,
        'assign.past-deadline': 2.8,
        'token.rotation': 2.7,
        'argv.parallelism': 2.6,
        'claim.resolved': 2.6,
        'http.deadline': 2.5,
        'stop.signals': 2.5,
        'runner.watchdog': 2.4,
        'backoff.idle-poll': 2.2,
        'http.no-redirect': 2.2,
        'reconcile.other-errors-retry': 2.2,
        'assign.incompatible': 2.1,
        'stop.drain': 2.1,
        'upload.receipt': 2.1,
    },
    'session': {
        'backoff.schedule': 10.7,
        'callback.deadline': 10.3,
        'claim.failures': 8.6,
        'claim.interval': 7.6,
        'progress.append-failures': 6.9,
        'stop.drain-bound': 6.3,
        'heartbeat.end': 5.3,
        'service.idle-exit': 5.2,
        'peer.lease-paths': 5.1,
        'deadline.clock-step': 4.8,
        'lease.intervals': 4.8,
        'heartbeat.failures-ignored': 4.7,
        'idle.cpu': 4.7,
        'acquire.ceiling': 4.3,
        'deadline.idle': 4.2,
        'lease.callbacks': 4.2,
        'lease.window': 4.2,
        'backoff.read-base': 4.1,
        'deadline.monitor': 4.1,
        'deadline.probe-in-flight': 4.1,
        'probe.normalized-answered': 4.1,
        'progress.finished-last': 4.1,
        'probe.relations': 4.0,
        'backoff.retry-after': 3.6,
        'heartbeat.cadence': 3.6,
        'acquire.read-refusals': 3.5,
        'lease.capability': 3.5,
        'progress.cap': 3.2,
        'service.lease': 3.2,
        'probe.result-bound': 3.1,
        'isolation.warm-pool': 3.0,
        'callback.allowed-paths': 2.9,
        'lease.context': 2.9,
        'exit.table': 2.7,
        'acquire.polling': 2.6,
        'claim.one-at-a-time': 2.6,
        'progress.settled-facts': 2.6,
        'isolation.ceiling': 2.5,
        'probe.column-unknown': 2.5,
        'callback.append-deadline': 2.4,
        'heartbeat.during-probe': 2.4,
        'probe.scope-and-channel': 2.4,
        'probe.expression-data': 2.0,
    },
    'step': {
        'stream.read-timeout': 25.1,
        'stop.receipt-deadline': 20.1,
        'output.upload-silent': 10.2,
        'proxy.connect-deadline': 10.2,
        'stop.connect-deadline': 10.2,
        'work.facts-ceiling-order': 5.8,
        'result.facts-ceiling': 5.3,
        'peer.expiry-forms': 2.6,
        'stop.ack-line': 2.5,
        'progress.flushed': 2.3,
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
    ADMIT_WINDOW_S = 0.5

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
        now, sample = time.monotonic(), self._read()
        if sample is None:
            return False
        if self._mark is None or now - self._mark[0] < self.ADMIT_WINDOW_S:
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
