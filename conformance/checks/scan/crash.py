"""The crash matrix: SIGKILL the worker at every durable step of an assignment's life, restart it
on the same trees, let it finish, and judge the history Jepsen-style (SCAN-STATE-4 and the
clauses it protects: SCAN-STATE-2, SCAN-CLAIM-3, SCAN-UPLOAD-5, SCAN-TERMINAL-4, SCAN-RUNNER-9,
SCAN-PROGRESS-3, SCAN-RECONCILE-1).

A scan worker promises that everything a slot knows is on disk before the request that depends
on it, so a SIGKILL anywhere costs nothing: the restarted worker asks the server first, with the
identifiers it persisted, and finishes the same reservation with the same bytes. Each cell of the
matrix (one variant, one plane, a few seconds) kills the first life at one moment (a request held
unanswered, held after the server acted on it, just answered; a phase reaching the disk; a runner
mid-scan), checks what SCAN-STATE-4 says must already be on disk at that moment, restarts, waits
for the slot to finish, drains the worker (SIGTERM, exit 0), and then judges the whole history:

- each reservation ends with exactly one accepted outcome, a bundle or a report, never both;
- the six counts of Jepsen's total-queue checker, noted in the transcript: attempted (claim ids
  sent), acknowledged (grants), ok (grants resolved by exactly one outcome), lost (grants left
  unresolved), unexpected (requests about a reservation never granted) and duplicated (a second
  grant for a reservation, or a second, different upload or report for it): lost, unexpected and
  duplicated must be 0, since the server deduplicates only replays of the same bytes;
- after each restart, the first request about a reservation a slot held is its status read, and
  no runner fetches its targets before it (SCAN-RECONCILE-1); a slot that was claiming claims
  with the persisted id (SCAN-CLAIM-3);
- every upload of a reservation carries one digest and one length (SCAN-UPLOAD-5), every report
  the same bytes (SCAN-TERMINAL-4);
- every slot file, stale record and cursor is whole at every moment: a sampler reads them all
  the time the lives run (each read whole, strict and canonical; a file once published is never
  rewritten in place, which an atomic replace cannot do) and each life's leftovers parse
  (SCAN-STATE-2);
- no runner outlives the final life, and a runner left over by a killed worker (run without a
  PID namespace, so it survives) is fenced before the restarted worker starts a new generation
  (SCAN-RUNNER-9).

The kill-churn cell kills lives at seeded random moments (`--seed`) over several assignments and
two slots, then lets a last life finish, and applies the same judgement.
"""

import collections
import hashlib
import os
import signal
import threading
import time
import urllib.parse

from conformance import faults
from conformance import lifecycle as _lifecycle
from conformance.checks import check
from conformance.checks.scan._common import PHASE_TIMEOUT_S, RUN_TIMEOUT_S, describe_run, each_variant, stop_unnoticed
from conformance.planes.scan import READY_PREFIX, canonical, parse_strict, slot_file_problems
from conformance.planes.scan.plane import WAIT_SLICE_S
from conformance.planes.scan.verdict import SLOT_FILE_RE, STALE_FILE_RE
from conformance.runner import proc_alive
from conformance.timeouts import REAP_TIMEOUT_S, Deadline, node_hung

# The worker's own waits in every cell: the plane's poll interval, and a low error delay (the
# contract's floor is 0.1 s), so a step that fails after a restart costs little.
POLL_S = 0.2
ERROR_DELAY_S = 0.2
# How often the sampler reads the state tree's documents while a life runs: often enough to see
# each of the several writes one assignment makes (each an fsync apart), cheap enough beside
# three other checks.
SAMPLE_S = 0.01
# The kill-churn cell: how many lives are killed, each at a moment drawn uniformly from this
# window after its ready line (one small assignment takes about 0.3 s, several times that on a
# loaded machine), over this many assignments on two slots, one of them failing (a report).
CHURN_KILLS = 5
CHURN_KILL_AFTER_S = (0.05, 0.8)
CHURN_ASSIGNMENTS = 4
CHURN_SLOTS = 2
# A capability triple the reference build does not have: the assignment gets a terminal report
# at once (SCAN-ASSIGN-2), with no runner, which makes a fast failing assignment.
UNKNOWN_PLANNING_KIND = "conformance_unknown_kind"
# The bytes of a target: a few short lines, one of which the reference scan reports.
TARGET_BYTES = b"alpha = 1\npassword = 'abcdefghijklmnopqrstu'\n# end\n"
# How long a restarted worker may take to finish what it holds (one small assignment; five on two
# slots for the churn): several interpreter starts and fsyncs on a loaded 2-core machine. A
# passing cell waits only until it has finished.
FINISH_TIMEOUT_S = 2 * PHASE_TIMEOUT_S
# The whole-file documents of the state tree (SCAN-STATE-2): slot states, stale records, cursor.
CURSOR_FILE = "progress-cursor.json"
# Bytes read at a time from a state document (they are small: MAX_PENDING_BYTES at most).
READ_CHUNK_BYTES = 1 << 16


# ---------------------------------------------------------------- watching the state tree

class _Held(object):
    __slots__ = ("fd", "dev", "ino", "data")

    def __init__(self, fd, dev, ino, data):
        self.fd, self.dev, self.ino, self.data = fd, dev, ino, data


def _document_problem(name, data):
    """What is wrong with a whole-file document as read (None when it is whole and valid)."""
    if name == CURSOR_FILE:
        try:
            doc = parse_strict(data)
        except ValueError as exc:
            return "not strict JSON (%s)" % exc
        if not isinstance(doc, dict) or canonical(doc) != data:
            return "not a canonical JSON object"
        return None
    problems = slot_file_problems(name, data)
    return "; ".join(problems[:2]) if problems else None


def _read_fd(fd):
    chunks, offset = [], 0
    while True:
        chunk = os.pread(fd, READ_CHUNK_BYTES, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


class _StateSampler(object):
    """Reads every slot file, stale record and the cursor every SAMPLE_S while lives run.

    SCAN-STATE-2 says such a file is never missing, empty, partial or invalid on disk, because it
    is only ever replaced whole by a new file. The sampler sees both halves: each read through the
    name must be a whole, canonical document of its kind; and it keeps the last file it read of
    each name open, so that inode cannot be reused, and compares: a file whose bytes changed
    under the same inode was rewritten in place, which a write through a new file and os.replace
    never does (and which a crash in mid-write would leave torn).
    """

    def __init__(self, state_dir):
        self.state_dir = state_dir
        self.problems = []
        self.samples = 0
        self._held = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="crash-state-sampler", daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(REAP_TIMEOUT_S)
        for held in self._held.values():
            os.close(held.fd)
        self._held = {}

    def _loop(self):
        while not self._stop.wait(SAMPLE_S):
            self.sample()

    def _problem(self, text):
        if len(self.problems) < 8 and text not in self.problems:
            self.problems.append(text)

    def sample(self):
        self.samples += 1
        try:
            names = [n for n in os.listdir(self.state_dir)
                     if n == CURSOR_FILE or SLOT_FILE_RE.match(n) or STALE_FILE_RE.match(n)]
        except OSError:
            return
        for name in names:
            self._look(name)
        for name in [n for n in self._held if n not in names]:
            self._release(name)

    def _release(self, name):
        held = self._held.pop(name)
        if _read_fd(held.fd) != held.data:
            self._problem("%s changed in place before it was replaced" % name)
        os.close(held.fd)

    def _look(self, name):
        try:
            fd = os.open(os.path.join(self.state_dir, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return  # removed between the listing and the open: a deletion is no torn file
        try:
            info = os.fstat(fd)
            data = _read_fd(fd)
        except OSError:
            os.close(fd)
            return
        problem = _document_problem(name, data)
        if problem:
            self._problem("%s read as %r: %s" % (name, data[:80], problem))
        held = self._held.get(name)
        if held is not None and (held.dev, held.ino) == (info.st_dev, info.st_ino):
            os.close(fd)
            if data != held.data:
                self._problem("%s was rewritten in place (the same inode holds new bytes)" % name)
                held.data = data
            return
        if held is not None:
            self._release(name)
        self._held[name] = _Held(fd, info.st_dev, info.st_ino, data)


# ---------------------------------------------------------------- small readers

def _snapshot_doc(life, name):
    """A document of the state tree as the life left it (None: absent or not strict JSON)."""
    raw = (life.state_files or {}).get(name)
    if raw is None:
        return None
    try:
        return parse_strict(raw)
    except ValueError:
        return None


def _slot_files(plane):
    return [n for n in plane.listing("state") if SLOT_FILE_RE.match(n) or STALE_FILE_RE.match(n)]


def _finished(plane, reservations):
    """Every reservation resolved and no slot holds anything any more."""
    return all(plane.server.reservation(r).resolution is not None for r in reservations) and not _slot_files(plane)


def _wait_until(plane, condition, timeout):
    """True once condition() holds (re-checked at each server event and every WAIT_SLICE_S), False
    when timeout passes first (plane.wait_for, without failing: the cell states what was missing)."""
    deadline = Deadline(timeout)
    while True:
        seen = len(plane.server.events)
        if condition():
            return True
        if deadline.over():
            node_hung()
            return False
        plane.server.server.wait_for(lambda event: True, min(deadline.slice(), WAIT_SLICE_S), since=seen)


def _ready_at(life):
    """When the harness read the life's ready line (monotonic; a busy machine reads it late), or None."""
    proc = life.proc
    lines = proc.result.stdout_lines if proc.result is not None else proc.stdout_lines
    return next((t for t, text in lines if text.startswith(READY_PREFIX)), None)


def _calls_of(plane, life, verbs):
    """The server's calls of these verbs made by this life: on a connection accepted after the
    life was started, before its end. Not "after its ready line": the harness reads that line on
    a thread that a busy machine delays past the life's first request (a flake seen in a loaded
    run); and not every call after its start either: a request the previous life wrote just
    before its SIGKILL can be read by the server after this life began, on the old connection."""
    start, end = life.t_start, life.t_end
    accepted = dict((r.conn_id, r.t_accept) for r in plane.server.server.connections)
    return [c for c in plane.server.calls() if c.verb in verbs and c.t >= start and (end is None or c.t <= end)
            and accepted.get(c.exchange.conn_id, start) >= start]


def _call_of(plane, exchange):
    """The ScanCall of a held or answered exchange."""
    if exchange is None:
        return None
    return next((c for c in plane.server.calls() if c.exchange.seq == exchange.seq), None)


def _target_path(target):
    return urllib.parse.urlsplit(target["url"]).path


def _runner_alive(identity):
    """The process a runner identity names still runs (same pid and start time; not a zombie)."""
    pid = identity.get("pid") if isinstance(identity, dict) else None
    if not isinstance(pid, int) or not proc_alive(pid):
        return False
    try:
        with open("/proc/%d/stat" % pid) as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return False
    return len(fields) > 19 and fields[19] == identity.get("creation_time")


def _runner_identity(state):
    runner = (state or {}).get("runner") if isinstance(state, dict) else None
    identity = runner.get("identity") if isinstance(runner, dict) else None
    return identity.get("payload") if isinstance(identity, dict) else None


# ---------------------------------------------------------------- one cell

class _Cell(object):
    """One crash point: how the plane is arranged, how the first life is crashed, what must be on
    disk at the crash (SCAN-STATE-4), and what to watch once the worker restarts."""

    def __init__(self, arrange, crash, on_disk, after_restart=None, after_drain=None, pid1=True, parallelism=1):
        self.arrange, self.crash, self.on_disk = arrange, crash, on_disk
        self.after_restart, self.after_drain = after_restart, after_drain
        self.pid1, self.parallelism = pid1, parallelism


def _options(cell):
    return {"pid1": cell.pid1, "parallelism": cell.parallelism, "poll_s": POLL_S, "error_delay_s": ERROR_DELAY_S}


def _at(trigger_of, what):
    """A crash: start the first life with a trigger (trigger_of(plane, reservations)) and wait for it."""
    def crash(ctx, plane, reservations, cell, memo):
        life = plane.start(kill_at=trigger_of(plane, reservations), **_options(cell))
        _wait_until(plane, lambda: not life.running(), PHASE_TIMEOUT_S)
        if life.running():
            life.kill(reason="the crash point was never reached")
        life.wait(REAP_TIMEOUT_S)  # joins the trigger's watcher: the state files it left are read by then
        ctx.expect(life.fired, expected="the first life SIGKILLed %s" % what,
                   actual=lambda: "the moment never came (%s)" % describe_run(plane),
                   diagnosis="the worker never reached this step of an assignment's life, so the crash could "
                             "not happen there; see the requests above")
        memo["trigger"] = life.trigger
        return life
    return crash


def _run_cell(ctx, label, cell):
    """Arrange, crash the first life, check the disk, restart, finish, drain; then judge."""
    plane = ctx.plane()
    memo = {}
    reservations = cell.arrange(plane, memo)
    sampler = _StateSampler(plane.state_dir).start()
    try:
        first = cell.crash(ctx, plane, reservations, cell, memo)
        ctx.note("cell %s: life %d killed %s" % (label, first.index, first.trigger.description if first.trigger
                                                  else "by the check"))
        cell.on_disk(ctx, plane, first, reservations, memo, label)
        final = plane.restart()
        plane.wait_ready(final)  # SCAN-STOP-1: a SIGTERM before the handlers exist is ignored by a PID 1
        if cell.after_restart is not None:
            cell.after_restart(ctx, plane, final, reservations, memo, label)
        finished = _wait_until(plane, lambda: _finished(plane, reservations) or not final.running(),
                               FINISH_TIMEOUT_S) and _finished(plane, reservations)
        result = plane.stop(signal.SIGTERM, RUN_TIMEOUT_S)
    finally:
        sampler.stop()
    _judge(ctx, plane, reservations, label, sampler, finished, result, memo, cell.parallelism)
    if cell.after_drain is not None:
        cell.after_drain(ctx, plane, memo, label)


# ---------------------------------------------------------------- the judgement

def _jepsen(plane):
    """The six counts of a total-queue history (Jepsen's checker), read from the server."""
    server = plane.server
    attempted = set(c.request_id or (c.doc or {}).get("request_id") for c in server.calls("claim"))
    attempted.discard(None)
    granted = server.granted()
    granted_ids = set(granted.values())
    counts = collections.OrderedDict((k, 0) for k in ("attempted", "acknowledged", "ok", "lost", "unexpected",
                                                      "duplicated"))
    counts["attempted"], counts["acknowledged"] = len(attempted), len(granted)
    for res in server.reservations():
        if res.doc is None:
            continue
        outcomes = [c for c in res.puts + res.terminals if c.accepted]
        if res.resolution is None or not outcomes:
            counts["lost"] += 1
        elif len(outcomes) == 1:
            counts["ok"] += 1
        digests = set(c.body_sha256 for c in res.puts if c.complete)
        bodies = set(c.body for c in res.terminals)
        counts["duplicated"] += (max(0, len(res.request_ids) - 1) + max(0, len(digests) - 1)
                                 + max(0, len(bodies) - 1) + max(0, len(outcomes) - 1))
    counts["unexpected"] = len([c for c in server.calls() if c.verb in ("status", "progress", "terminal", "bundle")
                                and c.reservation_id not in granted_ids])
    return counts


def _restart_problems(plane, lives, single_slot):
    """SCAN-RECONCILE-1, SCAN-CLAIM-3: what each restarted life did first about what it held."""
    found = []
    for previous, life in zip(lives, lives[1:]):
        for name in sorted(previous.state_files or {}):
            if not SLOT_FILE_RE.match(name):
                continue
            state = _snapshot_doc(previous, name)
            if not isinstance(state, dict):
                continue
            if state.get("phase") == "claiming":
                claims = _calls_of(plane, life, ("claim",))
                if single_slot and claims and (claims[0].doc or {}).get("request_id") != state.get("request_id"):
                    found.append("life %d's first claim carried another id than the %s of life %d (%s)" % (
                        life.index, name, previous.index, (claims[0].doc or {}).get("request_id")))
                continue
            try:
                rid = state["assignment"]["reservation"]["reservation_id"]
            except (KeyError, TypeError):
                continue
            about = [c for c in _calls_of(plane, life, ("status", "terminal", "bundle")) if c.reservation_id == rid]
            if not about:
                continue
            if about[0].verb != "status":
                found.append("life %d's first request about reservation %d (held in %s, phase %s) was %s %s, "
                             "not its status read" % (life.index, rid, name, state.get("phase"), about[0].method,
                                                      about[0].path))
                continue
            paths = [_target_path(t) for t in state["assignment"].get("targets", []) if isinstance(t, dict)
                     and isinstance(t.get("url"), str)]
            # Since the ready line: before it, a runner of the killed life may still be fetching (it
            # runs in its own session until the new life fences it).
            start = _ready_at(life)
            early = start is not None and plane.timeline.requests(
                fake="store", method="GET", since=start, until=about[0].t, where=lambda e: e.path in paths)
            if early:
                found.append("life %d fetched a target of reservation %d before its status read" % (life.index, rid))
    return found


def _judge(ctx, plane, reservations, label, sampler, finished, result, memo, parallelism):
    cell = "cell %s: " % label
    lives = plane.lives.lives
    # SCAN-STATE-2: whole files at every moment, and whatever each life left behind.
    ctx.note("%sthe sampler read the state tree %d times" % (cell, sampler.samples))
    ctx.expect(not sampler.problems, expected=cell + "every slot file, stale record and cursor whole and canonical "
               "whenever it is read, each new version a new file (SCAN-STATE-2)",
               actual=lambda: "; ".join(sampler.problems),
               diagnosis="write each state document to a new file in the same directory, fsync it and os.replace "
                         "it over the old one; never open the live file for writing")
    left = [(life.index, name, problem) for life in lives for name, raw in sorted((life.state_files or {}).items())
            if SLOT_FILE_RE.match(name) or STALE_FILE_RE.match(name)
            for problem in slot_file_problems(name, raw)[:1]]
    ctx.expect(not left, expected=cell + "every slot file each life left behind parses as a state of its phase",
               actual=lambda: "; ".join("after life %d, %s: %s" % item for item in left[:3]),
               diagnosis="a crash may come at any moment: a state file must be replaced whole, never written in place")
    # SCAN-RECONCILE-1, SCAN-CLAIM-3: after each restart, ask first, with the persisted ids.
    order = _restart_problems(plane, lives, parallelism == 1)
    ctx.expect(not order, expected=cell + "after each restart, the first request about a reservation a slot held "
               "is its status read (no runner fetch before it); a claiming slot claims with its persisted id",
               actual=lambda: "; ".join(order[:3]),
               diagnosis="on restart, read the status of every held reservation before repeating anything")
    # SCAN-UPLOAD-5, SCAN-TERMINAL-4 and one outcome per reservation.
    for res in [plane.server.reservation(r) for r in reservations]:
        shapes = sorted(set((c.digest_header, c.content_length, c.body_sha256 if c.complete else c.digest_header)
                            for c in res.puts))
        ctx.expect(len(shapes) <= 1, expected=cell + "every upload of reservation %d with one digest and one "
                   "length (SCAN-UPLOAD-5)" % res.reservation_id,
                   actual=lambda: "%d different uploads: %s" % (len(shapes), ", ".join(
                       "%s/%s bytes" % ((d or "-")[:12], n) for d, n, _s in shapes)),
                   diagnosis="upload the bundle adopted before the crash, the same file, on every retry and restart")
        bodies = sorted(set(c.body for c in res.terminals))
        ctx.expect(len(bodies) <= 1, expected=cell + "every terminal report of reservation %d the same bytes "
                   "(SCAN-TERMINAL-4)" % res.reservation_id,
                   actual=lambda: "%d different report bodies (%s)" % (len(bodies), _diff(bodies)),
                   diagnosis="persist the fitted report before its first send and send exactly those bytes every "
                             "time, occurrence_id and occurred_at included")
        puts = [c for c in res.puts if c.accepted]
        reports = [c for c in res.terminals if c.accepted]
        ctx.expect(len(puts) + len(reports) <= 1, expected=cell + "reservation %d ends with one accepted bundle or "
                   "one accepted report, never both" % res.reservation_id,
                   actual="%d bundle(s) and %d report(s) accepted" % (len(puts), len(reports)),
                   diagnosis="believe the status read after a restart: a resolved reservation gets nothing more")
    # The Jepsen counts.
    counts = _jepsen(plane)
    ctx.note("%sjepsen: %s" % (cell, " ".join("%s=%d" % item for item in counts.items())))
    ctx.expect(counts["lost"] == 0 and counts["unexpected"] == 0 and counts["duplicated"] == 0,
               expected=cell + "lost = 0, unexpected = 0, duplicated = 0 (every grant resolved by one outcome; "
               "nothing sent about a reservation never granted; no second grant or different bytes)",
               actual=lambda: "%s; %s" % (" ".join("%s=%d" % item for item in counts.items()), describe_run(plane)),
               diagnosis="persist each identifier before the request that depends on it and, after a restart, "
                         "resume the same reservation with the same request id and the same bytes")
    granted = [r for r in reservations if plane.server.reservation(r).doc is not None]
    ctx.expect(finished and len(granted) == len(reservations),
               expected=cell + "the restarted worker finishes: every one of the %d reservation(s) granted and "
               "resolved, no slot file left" % len(reservations),
               actual=lambda: "%d granted, %s; state tree %s; %s" % (
                   len(granted), ", ".join(repr(plane.server.reservation(r)) for r in reservations),
                   _slot_files(plane), describe_run(plane)),
               diagnosis="a restart resumes what the slot file says: the claim, the status read, the upload or "
                         "the report, until the server resolves it")
    ctx.expect(result is not None and result.exit_code == 0,
               expected=cell + "the final life drains on SIGTERM and exits 0",
               actual=lambda: "exit %s" % (result.exit_code if result is not None else "none"),
               diagnosis=stop_unnoticed(result) or "the first SIGTERM drains: finish what the slots hold and exit 0 "
                                                   "(EXIT_OK)")
    # SCAN-RUNNER-9, SCAN-STOP-4: no runner of any life outlives the final one.
    alive = []
    for life in lives:
        if life.proc.is_pid1:
            continue  # its PID namespace ended with it, and its recorded pids are that namespace's
        for name in sorted(life.state_files or {}):
            identity = _runner_identity(_snapshot_doc(life, name)) if SLOT_FILE_RE.match(name) else None
            if identity is not None and _runner_alive(identity):
                alive.append((life.index, identity["pid"]))
    leftover = memo.get("leftover")
    if leftover is not None and _runner_alive(leftover):
        alive.append((1, leftover["pid"]))
    ctx.expect(not alive, expected=cell + "no runner alive after the final life exited",
               actual=lambda: ", ".join("the runner pid %d recorded by life %d" % (pid, index)
                                        for index, pid in sorted(set(alive))),
               diagnosis="on restart, fence a recorded runner by its exact identity (SIGKILL to its group) before "
                         "going on")


def _diff(bodies):
    if len(bodies) < 2:
        return ""
    first, second = bodies[0], bodies[1]
    at = next((i for i, (a, b) in enumerate(zip(first, second)) if a != b), min(len(first), len(second)))
    return "first difference at byte %d: %r vs %r" % (at, first[max(0, at - 30):at + 30],
                                                      second[max(0, at - 30):at + 30])


# ---------------------------------------------------------------- arrangements

def _one_assignment(plane, memo=None):
    return [plane.add_assignment(targets=[plane.add_target("notes.txt", TARGET_BYTES)])]


def _failing_assignment(plane, memo=None):
    """An assignment whose capability triple this build lacks: a terminal report, no runner."""
    return [plane.add_assignment(targets=[plane.add_target("notes.txt", TARGET_BYTES)],
                                 planning_kind=UNKNOWN_PLANNING_KIND)]


def _slow_assignment(plane, memo=None):
    """The target's first GET hangs: the first generation's runner stays alive mid-scan."""
    target = plane.add_target("slow.txt", TARGET_BYTES)
    plane.store.add_fault(faults.hang(), plane.target_match(target, first=1))
    return [plane.add_assignment(targets=[target])]


def _put_never_processed(plane, memo):
    """The first life's upload hangs unprocessed: bundle_ready stays on disk until the crash (the
    hold is lifted before the restart, see _bundle_on_disk)."""
    reservations = _one_assignment(plane)
    memo["hold"] = plane.server.add_fault(faults.hang(), plane.server.bundle_match(phase="request"))
    return reservations


# ---------------------------------------------------------------- what must be on disk at the crash

def _expect_state(ctx, label, life, ok, expected, diagnosis):
    state = (life.state_files or {}).get("slot-0.json")
    ctx.expect(ok, expected="cell %s: at the crash, slot-0.json shows %s (SCAN-STATE-4)" % (label, expected),
               actual=lambda: "slot-0.json at the crash: %r" % (state[:300] if state else None),
               diagnosis=diagnosis)


def _claiming_on_disk(allow_assigned=False):
    def on_disk(ctx, plane, life, reservations, memo, label):
        call = _call_of(plane, memo["trigger"].exchange)
        request_id = (call.doc or {}).get("request_id") if call is not None else None
        state = _snapshot_doc(life, "slot-0.json") or {}
        res = plane.server.reservation(reservations[0])
        ok = (request_id is not None and state.get("phase") == "claiming" and state.get("request_id") == request_id)
        if allow_assigned and state.get("phase") not in (None, "claiming"):
            ok = state.get("assignment") == res.doc  # the kill came a moment after the answer: any later phase
        _expect_state(ctx, label, life, ok, "phase claiming with the request id the claim carries (%s)%s"
                      % (request_id, ", or a phase holding the granted assignment" if allow_assigned else ""),
                      "persist {phase: claiming, request_id} before the claim leaves, or a lost answer reserves "
                      "work nobody comes back for")
    return on_disk


def _assigned_on_disk(ctx, plane, life, reservations, memo, label):
    state = _snapshot_doc(life, "slot-0.json") or {}
    res = plane.server.reservation(reservations[0])
    _expect_state(ctx, label, life, state.get("phase") == "assigned" and state.get("assignment") == res.doc,
                  "phase assigned with the assignment of the 201 (reservation %d) while its status read is held"
                  % res.reservation_id,
                  "persist the assignment before the status read that follows a 201")


def _running_on_disk(ctx, plane, life, reservations, memo, label):
    state = _snapshot_doc(life, "slot-0.json") or {}
    runner = state.get("runner") if isinstance(state.get("runner"), dict) else {}
    root = os.path.join(plane.work_dir, runner.get("root_name") or "-")
    gated = all(os.path.isfile(os.path.join(root, name)) for name in ("owner.json", "start.json"))
    _expect_state(ctx, label, life, state.get("phase") == "assigned" and runner.get("status") == "running"
                  and _runner_identity(state) is not None and gated,
                  "the runner record with its identity and status running, and owner.json and start.json in "
                  "its root, while the runner fetches its target",
                  "persist the runner's identity before its start gate opens, so a restart can fence it")


def _bundle_on_disk(held_verb=None):
    def on_disk(ctx, plane, life, reservations, memo, label):
        state = _snapshot_doc(life, "slot-0.json") or {}
        res = plane.server.reservation(reservations[0])
        bundle = state.get("bundle") if isinstance(state.get("bundle"), dict) else {}
        ready = os.path.join(plane.bundle_dir, "ready", "%s.jsonl" % res.bundle_id)
        try:
            with open(ready, "rb") as handle:
                data = handle.read()
        except OSError:
            data = None
        ok = (state.get("phase") == "bundle_ready" and data is not None
              and hashlib.sha256(data).hexdigest() == bundle.get("payload_sha256") and len(data) == bundle.get("bytes"))
        wanted = "phase bundle_ready whose bundle names the file in ready/ (its digest and size)"
        if held_verb is not None:
            call = _call_of(plane, memo["trigger"].exchange)
            ok = ok and call is not None and call.digest_header == bundle.get("payload_sha256") \
                and call.content_length == bundle.get("bytes")
            wanted += ", the digest and length the held upload carries"
        else:
            arrived = plane.server.calls("bundle")
            ctx.note("cell %s: %d upload(s) had arrived at the crash (each held unprocessed)" % (label, len(arrived)))
            memo["hold"].remove()  # the restarted worker's uploads go through
            memo["hold"].release(answer=False)
        _expect_state(ctx, label, life, ok, wanted,
                      "persist bundle_ready (and move the bundle to ready/) before the upload that depends on it")
    return on_disk


def _terminal_on_disk(ctx, plane, life, reservations, memo, label):
    state = _snapshot_doc(life, "slot-0.json") or {}
    call = _call_of(plane, memo["trigger"].exchange)
    ok = (state.get("phase") == "terminal_pending" and isinstance(state.get("terminal"), dict) and call is not None
          and canonical(state["terminal"]) == call.body)
    _expect_state(ctx, label, life, ok, "phase terminal_pending whose report is, byte for byte, the report held "
                  "(SCAN-TERMINAL-4)",
                  "persist the fitted report (terminal_pending) before its first send, and send those bytes")


def _cursor_on_disk(ctx, plane, life, reservations, memo, label):
    call = _call_of(plane, memo["trigger"].exchange)
    sequence = (call.doc or {}).get("sequence") if call is not None else None
    cursor = _snapshot_doc(life, CURSOR_FILE)
    at = cursor.get("sequence") if isinstance(cursor, dict) else None
    memo["cursor"], memo["held_sequence"] = at, sequence
    ctx.expect(isinstance(sequence, int) and isinstance(at, int) and at < sequence,
               expected="cell %s: at the crash, %s below the held event's sequence %s (SCAN-PROGRESS-3)"
               % (label, CURSOR_FILE, sequence),
               actual=lambda: "the cursor at the crash: %r" % (cursor,),
               diagnosis="move the cursor past an event only once the server acknowledged it")


# ---------------------------------------------------------------- the during-scan crash

def _during_scan(ctx, plane, reservations, cell, memo):
    """Start the first life, wait until its runner is mid-fetch, and SIGKILL the worker alone: as
    PID 1 the kernel ends the runner with it; without a PID namespace the runner (in its own
    session) survives as a leftover."""
    life = plane.start(**_options(cell))
    res = plane.server.reservation(reservations[0])
    path = _target_path(res.targets[0])

    def mid_scan():
        state = plane.slot_state(0) or {}
        runner = state.get("runner") if isinstance(state.get("runner"), dict) else {}
        return (runner.get("status") == "running" and _runner_identity(state) is not None
                and bool(plane.timeline.requests(fake="store", method="GET", where=lambda e: e.path == path)))

    plane.wait_for(mid_scan, "a runner recorded as running and fetching its target")
    identity = _runner_identity(plane.slot_state(0))
    if life.proc.is_pid1:
        life.kill(reason="while the runner fetches its target")
    else:
        life.signal(signal.SIGKILL)  # the worker only: its runner, in a session of its own, stays
        life.wait(REAP_TIMEOUT_S + PHASE_TIMEOUT_S)
        if _runner_alive(identity):
            memo["leftover"] = identity
            ctx.note("cell: the runner pid %d outlived the worker; the restart must fence it" % identity["pid"])
        else:
            ctx.note("cell: the runner died with the worker; there is no leftover to fence")
    memo["generation"] = ((plane.slot_state(0) or {}).get("runner") or {}).get("generation")
    return life


def _fenced_first(ctx, plane, final, reservations, memo, label):
    """SCAN-RUNNER-9: the leftover runner is gone by the time the restarted worker records a new
    generation (or finishes)."""
    leftover = memo.get("leftover")
    if leftover is None:
        return
    old = memo.get("generation")

    def moved_on():
        state = plane.slot_state(0)
        runner = (state or {}).get("runner") if isinstance(state, dict) else None
        return plane.slot_raw(0) is None or (isinstance(runner, dict) and runner.get("generation") != old)

    reached = _wait_until(plane, lambda: moved_on() or not final.running(), PHASE_TIMEOUT_S) and moved_on()
    still = _runner_alive(leftover)
    ctx.expect(reached and not still, expected="cell %s: the leftover runner (pid %d) fenced before the restarted "
               "worker records a new generation (SCAN-RUNNER-9)" % (label, leftover["pid"]),
               actual=lambda: "a new generation was %srecorded and the leftover runner was %s" % (
                   "" if reached else "never ", "still alive" if still else "gone"),
               diagnosis="on restart, SIGKILL the recorded runner's process group once /proc shows its exact pid, "
                         "start time and executable, and wait until it is gone before a new generation")


# ---------------------------------------------------------------- the checks

def _matrix(ctx, cells):
    each_variant(ctx, cells, lambda label, cell: _run_cell(ctx, label, cell))


@check("crash.claim", clauses=["SCAN-STATE-4", "SCAN-STATE-2", "SCAN-CLAIM-3", "SCAN-RECONCILE-1"], level="MUST",
       title="a SIGKILL around the claim costs nothing: the same id, the same reservation, one outcome",
       fakes="four cells, each one assignment: the first claim held unprocessed; held after the server granted it; "
             "killed just after its 201; the status read after the 201 held; then a restart on the same trees",
       expected="at the crash slot-0.json shows claiming with the held claim's id (assigned with the granted "
                "assignment once the status read is held); the restart claims with that id or reads the status "
                "first, finishes with one accepted bundle; lost = unexpected = duplicated = 0")
def _(ctx):
    _matrix(ctx, [
        ("claim held unprocessed", _Cell(_one_assignment, _at(lambda p, r: p.held("claim"),
                                                               "while the first claim was held unprocessed"),
                                         _claiming_on_disk())),
        ("claim granted, answer lost", _Cell(_one_assignment, _at(lambda p, r: p.held("claim", processed=True),
                                                                   "while the granted claim's answer was held"),
                                             _claiming_on_disk())),
        ("201 answered", _Cell(_one_assignment, _at(lambda p, r: p.answered("claim"), "just after the 201"),
                               _claiming_on_disk(allow_assigned=True))),
        ("assigned, status read held", _Cell(_one_assignment, _at(lambda p, r: p.held("status"),
                                                                   "while the status read after the 201 was held"),
                                             _assigned_on_disk)),
    ])


@check("crash.scan", clauses=["SCAN-STATE-4", "SCAN-STATE-2", "SCAN-RUNNER-9", "SCAN-RECONCILE-1"], level="MUST",
       title="a SIGKILL during the scan: the runner is recorded, the leftover is fenced, the scan is redone once",
       fakes="the target's first GET hangs; the worker is SIGKILLed while its runner fetches it, once as PID 1 (the "
             "runner dies with it) and once without a PID namespace (the runner survives); then a restart",
       expected="at the crash the runner record has its identity and status running; the restarted worker reads "
                "the status first, fences the leftover runner before a new generation, uploads one bundle; no "
                "runner alive at the end")
def _(ctx):
    _matrix(ctx, [
        ("mid-scan, PID 1", _Cell(_slow_assignment, _during_scan, _running_on_disk, _fenced_first)),
        ("mid-scan, runner left over", _Cell(_slow_assignment, _during_scan, _running_on_disk, _fenced_first,
                                             pid1=False)),
    ])


@check("crash.upload", clauses=["SCAN-STATE-4", "SCAN-STATE-2", "SCAN-UPLOAD-5", "SCAN-RECONCILE-1"], level="MUST",
       title="a SIGKILL around the upload: bundle_ready first, the same bytes after, one accepted bundle",
       fakes="three cells: killed when slot-0.json reaches bundle_ready (the upload hangs unprocessed); the upload "
             "held unprocessed; the upload accepted and its answer held; then a restart",
       expected="at the crash slot-0.json shows bundle_ready naming the ready file (and the held upload's digest "
                "and length); the restart reads the status first and uploads the same bytes or believes the "
                "acceptance; one accepted bundle; lost = unexpected = duplicated = 0")
def _(ctx):
    _matrix(ctx, [
        ("bundle_ready before the upload", _Cell(_put_never_processed,
                                                 _at(lambda p, r: p.when_phase(0, "bundle_ready"),
                                                     "when slot-0.json reached bundle_ready"),
                                                 _bundle_on_disk())),
        ("upload held unprocessed", _Cell(_one_assignment, _at(lambda p, r: p.held("bundle"),
                                                                "while the upload was held unprocessed"),
                                          _bundle_on_disk("bundle"))),
        ("upload accepted, answer lost", _Cell(_one_assignment, _at(lambda p, r: p.held("bundle", processed=True),
                                                                     "while the accepted upload's answer was held"),
                                               _bundle_on_disk("bundle"))),
    ])


@check("crash.report", clauses=["SCAN-STATE-4", "SCAN-TERMINAL-4", "SCAN-STATE-2", "SCAN-RECONCILE-1"],
       level="MUST",
       title="a SIGKILL during a terminal report: persisted first, replayed byte for byte, one accepted report",
       fakes="one assignment this build cannot run (a report at once); its report held unprocessed, then held "
             "after the server accepted it; then a restart",
       expected="at the crash slot-0.json shows terminal_pending with exactly the held report's bytes; the restart "
                "reads the status first and resends those bytes or believes the acceptance; one accepted report")
def _(ctx):
    _matrix(ctx, [
        ("report held unprocessed", _Cell(_failing_assignment, _at(lambda p, r: p.held("terminal"),
                                                                    "while the report was held unprocessed"),
                                          _terminal_on_disk)),
        ("report accepted, answer lost", _Cell(_failing_assignment,
                                               _at(lambda p, r: p.held("terminal", processed=True),
                                                   "while the accepted report's answer was held"),
                                               _terminal_on_disk)),
    ])


def _judge_progress(ctx, plane, memo, label):
    """SCAN-PROGRESS-3: every event with a reservation delivered; none at or before the crash's cursor again."""
    events = [e for e in plane.journal() if isinstance(e, dict) and e.get("reservation_id") is not None]
    logged = plane.server.progress_events()
    received = set((doc or {}).get("sequence") for _call, doc, _replayed in logged)
    missing = [e.get("sequence") for e in events if e.get("sequence") not in received]
    ctx.expect(not missing and memo.get("held_sequence") in received,
               expected="cell %s: every journal event with a reservation delivered, the held one (%s) included "
               "(SCAN-PROGRESS-3)" % (label, memo.get("held_sequence")),
               actual=lambda: "never delivered: sequence(s) %s" % (missing[:10] or [memo.get("held_sequence")]),
               diagnosis="deliver at least once: resume after the cursor, which moves only past acknowledged events")
    restarted = set(c.exchange.seq for c in _calls_of(plane, plane.lives.lives[-1], ("progress",)))
    cursor = memo["cursor"]
    again = sorted(set(doc["sequence"] for call, doc, _r in logged
                       if call.exchange.seq in restarted and isinstance(doc, dict)
                       and isinstance(doc.get("sequence"), int) and doc["sequence"] <= cursor))
    ctx.expect(not again, expected="cell %s: after the restart no event at or before the crash's cursor (%s) sent "
               "again" % (label, cursor),
               actual=lambda: "sent again: sequence(s) %s" % again[:10],
               diagnosis="after a restart, resume delivery after the cursor, not from the journal's start")


@check("crash.progress", clauses=["SCAN-PROGRESS-3", "SCAN-STATE-4", "SCAN-STATE-2", "SCAN-RECONCILE-1"],
       level="MUST",
       title="a SIGKILL during a progress POST: the cursor moves only after an acknowledgement",
       fakes="one assignment; the first progress event held unprocessed, then held after the server recorded it; "
             "then a restart and a drain",
       expected="at the crash the cursor is below the held event; after the restart every journal event with a "
                "reservation reaches the server, none at or before the crash's cursor again")
def _(ctx):
    _matrix(ctx, [
        ("progress held unprocessed", _Cell(_one_assignment, _at(lambda p, r: p.held("progress"),
                                                                  "while a progress event was held unprocessed"),
                                            _cursor_on_disk, after_drain=_judge_progress)),
        ("progress recorded, answer lost", _Cell(_one_assignment,
                                                 _at(lambda p, r: p.held("progress", processed=True),
                                                     "while a recorded progress event's answer was held"),
                                                 _cursor_on_disk, after_drain=_judge_progress)),
    ])


# ---------------------------------------------------------------- kill churn

def _churn_assignments(plane, memo=None):
    reservations = [plane.add_assignment(targets=[plane.add_target("t%d.txt" % i, TARGET_BYTES + b"%d\n" % i)])
                    for i in range(CHURN_ASSIGNMENTS)]
    return reservations + _failing_assignment(plane)


class _AfterReady(_lifecycle.Trigger):
    """Fires delay_s after the life printed its ready line: a moment while it works, whatever
    its interpreter's start cost on a loaded machine."""

    def __init__(self, delay_s):
        self.delay_s = delay_s
        self.description = "%.3f s after its ready line" % delay_s
        self._at = None

    def wait(self, timeout):
        if self._at is None:
            if not self.life.proc.wait_for_line("stdout", lambda text: text.startswith(READY_PREFIX), timeout):
                return False
            self._at = time.monotonic() + self.delay_s
        left = self._at - time.monotonic()
        if left > timeout:
            time.sleep(timeout)
            return False
        time.sleep(max(0.0, left))
        return True


def _churn(ctx, plane, reservations, cell, memo):
    """CHURN_KILLS lives, each SIGKILLed at a seeded random moment after its ready line; the last
    killed one."""
    low, high = CHURN_KILL_AFTER_S
    schedule = [round(ctx.rng.uniform(low, high), 3) for _ in range(CHURN_KILLS)]
    ctx.note("cell churn: lives killed %s s after their ready line (seed %s)" % (schedule, ctx.seed))
    life = plane.start(kill_at=_AfterReady(schedule[0]), **_options(cell))
    life.wait(PHASE_TIMEOUT_S)
    for after_s in schedule[1:]:
        life = plane.restart(kill_at=_AfterReady(after_s))
        life.wait(PHASE_TIMEOUT_S)
    return life


def _nothing_on_disk(ctx, plane, life, reservations, memo, label):
    """Any moment is a legitimate crash point: what the last killed life left is judged with the rest."""


@check("crash.churn", clauses=["SCAN-STATE-2", "SCAN-STATE-4", "SCAN-CLAIM-3", "SCAN-UPLOAD-5", "SCAN-TERMINAL-4",
                               "SCAN-RECONCILE-1"], level="MUST",
       title="kill churn: lives SIGKILLed at seeded random moments over several assignments, then one finishes",
       fakes="five assignments (one the build cannot run) on two slots; five lives each SIGKILLed at a random "
             "moment (--seed) while they work; a last life runs until everything is resolved, then drains",
       expected="state files whole at every moment and after every life; after each restart status reads first; "
                "every reservation one outcome, the same bytes on every retry; lost = unexpected = duplicated = 0")
def _(ctx):
    _matrix(ctx, [("churn", _Cell(_churn_assignments, _churn, _nothing_on_disk, parallelism=CHURN_SLOTS))])
