"""Slots: N of them, each on its own; leftovers of a larger run finish and retire; the ready line;
a slot that cannot go on ends the worker (SCAN-SLOT-1 to SCAN-SLOT-4).

A slot is one claim-scan-upload loop with its own state file and its own request ids, so one
worker can hold N reservations and one stuck reservation holds up nobody else. A worker
restarted with a lower --parallelism still owns what its old slots hold: those slots finish
their work and retire, and never claim more. The start-up scan of the state tree is bounded, so
a flooded or forged tree ends the start instead of the host. The ready line is the supervisor's
sign that the worker is set up; printed after a request, it would lie about what was done first.
"""

import hashlib
import json
import os
import secrets
import subprocess
import time

from conformance.checks import check
from conformance.checks._unprivileged import (DROP_FAILED, UNPRIVILEGED_GID, UNPRIVILEGED_UID, open_traversable,
                                              reachable_copy, unprivileged_node)
from conformance.checks.scan._common import (PHASE_TIMEOUT_S, RUN_TIMEOUT_S, calls, describe_run, each_variant,
                                             faults)
from conformance.planes.scan import READY_PREFIX, instant
from conformance.servers import CA_FILE

PARALLELISM = 3
# SCAN-SLOT-2: the retirement line of a leftover slot (SCAN-OUTPUT-1 fixes it).
RETIRED_LINE = "worker slot %d: retired (lowered_parallelism_recovery_complete)"
# A 204's Retry-After long enough that slot 0 claims only once while the retire check watches:
# any further claim comes from the leftover slot, which must never claim.
LONG_RETRY_AFTER_S = 60
# SCAN-SLOT-2: limits of the start-up scan.
MAX_SLOT_ID = 100000
MAX_STATE_DIR_ENTRIES = 4096
# SCAN-ARGV-2: the exit status of a start-up that failed after the configuration was read.
EXIT_SLOT_DIED = 1
# SCAN-SLOT-3: the first claim is held unanswered this long (the worker's --http-timeout), far
# longer than the ready line may take.
HELD_CLAIM_S = 10


def _header(path):
    """The bundle header (line 1) of an uploaded bundle, or {}."""
    try:
        with open(path, "rb") as handle:
            return json.loads(handle.readline().decode("utf-8"))
    except (OSError, ValueError):
        return {}


def _slot_of(res):
    """The slot_id the headers of a reservation's whole uploads name ({} none)."""
    return set(_header(path).get("slot_id") for path in res.bundle_files.values())


@check("slot.parallel", clauses=["SCAN-SLOT-1"], level="MUST",
       title="--parallelism N runs N slots, each with its own state file and ids; a failing slot holds up none",
       fakes="--parallelism %d; %d reservations queued; every upload for the first reservation answered 503"
             % (PARALLELISM, PARALLELISM),
       expected="the first %d claims carry distinct ids, each granted one reservation; the other two reservations' "
                "bundles accepted while the first keeps failing; each reservation's bundles name one slot, the "
                "three slots distinct; the failing one's slot-<id>.json holds its reservation" % PARALLELISM)
def _(ctx):
    # Arrange
    plane = ctx.plane()
    made = [plane.add_assignment() for _ in range(PARALLELISM)]
    stuck = made[0]
    plane.server.add_fault(plane.server.error_answer(503, "unavailable"), plane.server.bundle_match(stuck))
    # Act
    plane.start(parallelism=PARALLELISM)
    for res in made[1:]:
        plane.wait_resolved(res)
    plane.wait_for(lambda: len(stuck.puts) >= 2 and stuck.bundle_files, "two refused uploads of reservation %d"
                   % stuck.reservation_id)
    # Assert
    claims = plane.server.claims()[:PARALLELISM]
    ids = [c.request_id for c in claims]
    granted = plane.server.granted()
    ctx.expect(len(set(ids)) == PARALLELISM and None not in ids
               and sorted(granted.get(i) for i in ids) == sorted(r.reservation_id for r in made),
               expected="%d claims with distinct request ids, each granted one of the reservations" % PARALLELISM,
               actual=lambda: "ids %s; grants %r" % (ids, granted),
               diagnosis="each slot claims with its own persisted request id")
    ctx.expect(stuck.resolution is None and all(r.resolution == "bundle_accepted" for r in made[1:]),
               expected="reservations %s accepted while %d keeps failing" % (
                   ", ".join(str(r.reservation_id) for r in made[1:]), stuck.reservation_id),
               actual=lambda: describe_run(plane),
               diagnosis="a slot's failure holds up no other slot")
    slots = [_slot_of(res) for res in made]
    named = [next(iter(s)) for s in slots if len(s) == 1]
    ctx.expect(len(named) == PARALLELISM and sorted(named) == list(range(PARALLELISM)),
               expected="each reservation's bundles name one slot, the three being 0, 1 and 2",
               actual="slot ids per reservation: %s" % [sorted(s, key=str) for s in slots],
               diagnosis="no reservation is worked by two slots, and the slots are numbered from 0")
    held = plane.slot_state(named[0]) or {}
    holds = ((held.get("assignment") or {}).get("reservation") or {}).get("reservation_id")
    ctx.expect(holds == stuck.reservation_id,
               expected="slot-%d.json holds reservation %d" % (named[0], stuck.reservation_id),
               actual="it holds %r (phase %r)" % (holds, held.get("phase")),
               diagnosis="each slot keeps its own state file, slot-<id>.json")


@check("slot.leftover-retires", clauses=["SCAN-SLOT-2", "SCAN-SLOT-3"], level="MUST",
       title="a slot file beyond --parallelism is finished, never claims, and retires; the worker carries on",
       fakes="slot-1.json planted holding an assignment the server granted; --parallelism 1; every 204 says "
             "Retry-After: %d" % LONG_RETRY_AFTER_S,
       expected="the ready line counts 2 slots; the leftover's bundle accepted; 'worker slot 1: retired "
                "(lowered_parallelism_recovery_complete)'; slot-1.json gone; one claim only (slot 0's); the worker "
                "still running")
def _(ctx):
    # Arrange
    plane = ctx.plane(retry_after=LONG_RETRY_AFTER_S)
    res = plane.add_assignment(queued=False)
    _request_id, doc = plane.grant(res)
    plane.write_slot(1, {"schema": 2, "phase": "assigned", "assignment": doc, "runner": None, "retained_work": []})
    # Act
    life = plane.start(parallelism=1)
    plane.wait_ready()
    plane.wait_resolved(res)
    line = RETIRED_LINE % 1
    retired = life.proc.wait_for_line("stdout", lambda text: text == line, PHASE_TIMEOUT_S)
    # Assert
    ready = [text for _t, text in life.proc.stdout_lines if text.startswith(READY_PREFIX)]
    ctx.expect(ready == [READY_PREFIX + "2 slots"],
               expected="the ready line %r" % (READY_PREFIX + "2 slots"),
               actual="%r" % ready,
               diagnosis="the ready line counts the leftover slots too (SCAN-SLOT-3)")
    ctx.expect(res.resolution == "bundle_accepted" and retired,
               expected="reservation %d's bundle accepted, then %r" % (res.reservation_id, line),
               actual=lambda: "resolution %s; stdout %r" % (res.resolution, life.proc.stdout_text()[-300:]),
               diagnosis="a leftover slot finishes its assignment, then retires with that line")
    claims = plane.server.claims()
    ctx.expect(len(claims) == 1 and plane.slot_raw(1) is None and life.running(),
               expected="one claim (slot 0's), slot-1.json gone, the worker running",
               actual=lambda: "%d claim(s); slot-1.json %s; running %s" % (
                   len(claims), "present" if plane.slot_raw(1) is not None else "gone", life.running()),
               diagnosis="a slot beyond --parallelism never claims, and its retirement is not an error")


def _flood(plane):
    """slot-0.json claiming, and more entries in the state tree than the worker scans."""
    plane.write_slot(0, {"schema": 2, "phase": "claiming", "request_id": "ab" * 16})
    first = os.path.join(plane.state_dir, "unrelated-0")
    with open(first, "wb"):
        pass
    for i in range(1, MAX_STATE_DIR_ENTRIES + 1):  # links to one empty file: creating thousands of files is slow
        os.link(first, os.path.join(plane.state_dir, "unrelated-%d" % i))


def _high_id(plane):
    plane.write_slot(MAX_SLOT_ID + 1, {"schema": 2, "phase": "claiming", "request_id": "cd" * 16})


@check("slot.startup-limits", clauses=["SCAN-SLOT-2"], level="MUST",
       title="a state tree with a slot id above %d or more than %d entries fails start-up"
             % (MAX_SLOT_ID, MAX_STATE_DIR_ENTRIES),
       fakes="one variant each: slot-%d.json (a claiming state); slot-0.json and %d other entries"
             % (MAX_SLOT_ID + 1, MAX_STATE_DIR_ENTRIES + 1),
       expected="exit %d with no request to the server" % EXIT_SLOT_DIED)
def _(ctx):
    def act(label, plant):
        # Arrange
        plane = ctx.plane()
        plant(plane)
        # Act
        life = plane.start()
        result = life.wait(RUN_TIMEOUT_S)
        # Assert
        ctx.expect(result.exit_code == EXIT_SLOT_DIED and not plane.server.calls(),
                   expected="exit %d before any request" % EXIT_SLOT_DIED,
                   actual=lambda: "%s; %s" % (result.describe(), describe_run(plane)),
                   diagnosis="the start-up scan is bounded: more entries or a higher id fail start-up")
    each_variant(ctx, [("a slot id of %d" % (MAX_SLOT_ID + 1), _high_id),
                       ("%d entries" % (MAX_STATE_DIR_ENTRIES + 2), _flood)], act)


@check("slot.ready-first", clauses=["SCAN-SLOT-3"], level="MUST",
       title="the ready line comes before the first request",
       fakes="the first claim is held unanswered (--http-timeout %d s)" % HELD_CLAIM_S,
       expected="'worker: started with 1 slots' on stdout while that claim is still unanswered")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    plane.server.add_fault(faults.hang(), plane.server.claim_match(first=1))
    # Act
    life = plane.start(http_timeout_s=HELD_CLAIM_S)
    claim = plane.wait_calls("claim", 1, answered=False)[0]
    plane.wait_ready()
    # Assert
    seen = [t for t, text in life.proc.stdout_lines if text == READY_PREFIX + "1 slots"]
    end = claim.exchange.t_end
    ctx.expect(seen and (end is None or seen[0] < end),
               expected="the ready line %r before the held claim ended" % (READY_PREFIX + "1 slots"),
               actual=lambda: "ready lines at %s; the claim ended at %s (stdout %r)" % (
                   seen, end, life.proc.stdout_text()[-200:]),
               diagnosis="print the ready line once the lock is held, the trees exist and every slot is set up, "
                         "before the first request")


def _identity(pid):
    """{pid, creation_time, executable} of a live process, as SCAN-RUNNER-2 records a runner's."""
    with open("/proc/%d/stat" % pid, "rb") as handle:
        text = handle.read().decode("ascii", "replace")
    fields = text[text.rindex(")") + 1:].split()
    return {"pid": pid, "creation_time": fields[19], "executable": os.readlink("/proc/%d/exe" % pid)}


def _runner_record(slot_id, reservation_id, identity):
    """A runner record (SCAN-RUNNER-2) of a generation whose runner is the process `identity` names."""
    generation = secrets.token_hex(16)
    root = "worker-assignment-%d-%d-%s" % (slot_id, reservation_id, generation)
    now = time.time()
    return {"generation": generation, "input_sha256": hashlib.sha256(b"{}").hexdigest(), "root_name": root,
            "input_ref": root + "/input.json", "events_ref": root + "/events.jsonl",
            "start_ref": root + "/start.json", "terminal_ref": root + "/terminal.json", "bundle_ref": None,
            "scan_started_at": instant(now - 1), "scan_deadline_at": instant(now + 60),
            "watchdog_deadline_at": instant(now + 90), "operation": "execute", "timeout_phase": None,
            "attempt": 1, "status": "running", "last_event": None, "terminal_sha256": None,
            "identity": {"host": identity, "payload": identity, "job_membership_verified": True}}


def _give_to(path, stop):
    """Make path and everything under it the unprivileged user's, and let that user reach it."""
    for folder, dirs, files in os.walk(path):
        for name in dirs + files:
            os.lchown(os.path.join(folder, name), UNPRIVILEGED_UID, UNPRIVILEGED_GID)
    open_traversable(path, stop)


@check("slot.died", clauses=["SCAN-SLOT-4"], level="MUST",
       title="a slot whose recorded runner cannot be proven gone ends the worker with exit 1",
       fakes="the worker runs as uid %d (dropped by a small launcher before exec); slot-0.json planted holding an "
             "assignment whose runner record names a live process of root's (its identity exact): the worker "
             "cannot read its executable nor signal it" % UNPRIVILEGED_UID,
       expected="'worker slot 0: containment authority remains pending', exit %d; no upload or report; the process "
                "untouched; slot-0.json kept" % EXIT_SLOT_DIED)
def _(ctx):
    # Arrange
    plane = ctx.plane()
    plane.extra_env["SSL_CERT_FILE"] = reachable_copy(ctx, CA_FILE)
    unprivileged = unprivileged_node(ctx, files=(plane.extra_env["SSL_CERT_FILE"],))
    res = plane.add_assignment(queued=False)
    _request_id, doc = plane.grant(res)
    foreign = subprocess.Popen(["sleep", str(int(RUN_TIMEOUT_S) * 2)], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        identity = _identity(foreign.pid)
        plane.write_slot(0, {"schema": 2, "phase": "assigned", "assignment": doc, "retained_work": [],
                             "runner": _runner_record(0, res.reservation_id, identity)})
        for path in (plane.state_home, plane.data_home, plane.home_dir, plane.tmp,
                     os.path.dirname(plane.token_file)):
            _give_to(path, ctx.tmp)
        # Act
        original, ctx.node = ctx.node, unprivileged
        try:
            life = plane.start(pid1=False)  # the host's PID namespace: the recorded process is in view
        finally:
            ctx.node = original
        result = life.wait(RUN_TIMEOUT_S)
        alive = foreign.poll() is None and _identity(foreign.pid) == identity
    finally:
        foreign.kill()
        foreign.wait()
    if DROP_FAILED in life.proc.stderr_text():
        raise RuntimeError("the harness could not start the node as uid %d: %s" % (
            UNPRIVILEGED_UID, life.proc.stderr_text().strip()[:300]))
    # Assert
    line = "worker slot 0: containment authority remains pending"
    said = [text for _t, text in life.proc.stdout_lines if text == line]
    ctx.expect(result.exit_code == EXIT_SLOT_DIED and said,
               expected="%r, then exit %d" % (line, EXIT_SLOT_DIED),
               actual=lambda: "%s; stdout %r" % (result.describe(), life.proc.stdout_text()[-300:]),
               diagnosis="a runner that cannot be proven gone must not be left behind by a slot that carries on: "
                         "the slot ends and the worker stops, exit 1")
    mutations = calls(plane, "bundle") + calls(plane, "terminal")
    state = plane.slot_state(0) or {}
    kept = ((state.get("runner") or {}).get("identity") or {}).get("payload") == identity
    ctx.expect(alive and not mutations and kept,
               expected="the recorded process untouched, no upload or report, slot-0.json still recording it",
               actual=lambda: "process alive %s; %d mutation(s); slot-0.json %r" % (
                   alive, len(mutations), (plane.slot_raw(0) or b"")[:200]),
               diagnosis="what the worker cannot prove gone it neither forgets nor reports (SCAN-RUNNER-9)")
