"""Slot state on disk: private trees, whole and valid files, what an unreadable or odd file
means, legacy states, one worker per tree (SCAN-STATE-1 to SCAN-STATE-8).

A slot's whole memory is one file. Everything the worker promises across a crash (the same
request id, the same bytes, one outcome per reservation) rests on that file being private,
written whole, valid for its phase at every moment, and never touched when the worker cannot
understand it: a state it overwrote or deleted could be a live reservation nobody finishes. The
crash matrix (crash.py) SIGKILLs the worker at every durable step; the checks here judge each
rule directly, on a worker that runs normally.
"""

import hashlib
import json
import os
import re
import signal
import stat
import time

from conformance import schema as _schema
from conformance.checks import check
from conformance.checks.scan._common import (DRAIN_EXIT, PHASE_TIMEOUT_S, RUN_TIMEOUT_S, SCHEDULE_SLACK_S,
                                             describe_run, drain_diagnosis, each_variant, faults, held_state,
                                             lines_of, read_bytes, stop_unnoticed)
from conformance.planes.scan import canonical, parse_strict, slot_file_problems
from conformance.planes.scan import deploy as _deploy

SCHEMA_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "..", "contract", "schemas", "scan",
                           "slot-state.schema.json")
# SCAN-STATE-5: the line a slot prints after each failed step on a state it cannot read.
VALIDATION_LINE = "worker slot %d: worker protocol or state validation failed"
# How many times the validation line must repeat to show that the slot keeps trying.
REPEATS = 2
# state.unreadable-kept: one slot per kind of unreadable state; the last (a file of another
# user) only when the harness may chown, i.e. runs as root.
PLANTED = 6 if os.geteuid() == 0 else 5
# The owner of that file: nobody.
OTHER_UID = 65534
# SCAN-ARGV-2: the exit statuses these checks expect.
EXIT_SLOT_DIED, EXIT_LOCKED = 1, 75
# The no-work wait of the first worker in state.one-worker: long enough that it stays asleep
# (changing no file) while two more workers start and exit on a loaded machine.
QUIET_RETRY_AFTER_S = 8
# How long the trees must stay unchanged before the first worker counts as asleep (its no-work
# event journaled and skipped by the cursor: a few file writes within milliseconds of the answer).
SETTLE_S = 0.5
# D34: the runners' code, the one bytecode file SCAN-STATE-1 allows (in <state>/runner-code/).
RUNNER_CODE_RE = re.compile(r"runner-[a-f0-9]{64}\.[A-Za-z0-9_-]{1,64}\.pyc")


def _slot_schema():
    with open(SCHEMA_PATH, "rb") as handle:
        return json.loads(handle.read().decode("utf-8"))


def _tree_walk(plane):
    """(path, lstat) of every entry under the three trees."""
    found = []
    for top in (plane.state_dir, plane.bundle_dir, plane.work_dir):
        if os.path.lexists(top):
            found.append((top, os.lstat(top)))
        for base, dirs, names in os.walk(top):
            for name in dirs + names:
                path = os.path.join(base, name)
                try:
                    found.append((path, os.lstat(path)))
                except OSError:
                    continue  # removed while walked
    return found


def _private_problems(plane, lock_name="remote-worker.lock"):
    """SCAN-STATE-1: every directory 0700 and ours and no symlink; every file 0600; no bytecode."""
    problems = []
    uid = os.geteuid()
    for path, info in _tree_walk(plane):
        mode = stat.S_IMODE(info.st_mode)
        name = os.path.basename(path)
        # D34: the one bytecode the worker writes on purpose, the runners' code, in runner-code/ of the state tree
        runner_code = os.path.dirname(path) == os.path.join(plane.state_dir, "runner-code") \
            and RUNNER_CODE_RE.fullmatch(name) is not None
        if name == "__pycache__" or (name.endswith(".pyc") and not runner_code):
            problems.append("%s: bytecode" % path)
        elif stat.S_ISLNK(info.st_mode):
            problems.append("%s: a symlink" % path)
        elif stat.S_ISDIR(info.st_mode):
            if mode != 0o700 or info.st_uid != uid:
                problems.append("%s: a directory of mode %04o, uid %d" % (path, mode, info.st_uid))
        elif mode != 0o600:
            problems.append("%s: a file of mode %04o" % (path, mode))
    return problems


@check("state.private-trees", clauses=["SCAN-STATE-1"], level="MUST",
       title="the state, bundle and work trees are private: directories 0700, files 0600, no bytecode",
       fakes="one assignment; its upload is held while the trees are walked, then let through",
       expected="at the held upload and after the drain, every directory of the three trees is 0700 and the "
                "worker's, every file 0600, no symlink, no __pycache__ or .pyc")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment()
    hold = plane.server.add_fault(faults.hang(), plane.server.bundle_match(first=1))
    # Act
    plane.start()
    plane.wait_for(lambda: hold.applied >= 1, "the upload held")
    during = _private_problems(plane)
    hold.release(answer=True)
    plane.wait_resolved(res)
    plane.wait_phase(0, None)
    result = plane.stop()
    after = _private_problems(plane)
    # Assert
    ctx.expect(result.exit_code == 0, expected="a drain ends with exit 0", actual=lambda: result.describe(),
               diagnosis=drain_diagnosis(result))
    ctx.expect(not during, expected="private trees while the upload is in flight",
               actual=lambda: "; ".join(during[:5]),
               diagnosis="create every directory 0700 (makedirs gives parents the umask's mode) and every file "
                         "0600, and run runners with -B")
    ctx.expect(not after, expected="private trees after the drain", actual=lambda: "; ".join(after[:5]),
               diagnosis="create every directory 0700 and every file 0600; write no bytecode")


@check("state.partials-removed", clauses=["SCAN-STATE-2"], level="MUST",
       title="leftover temporary files are ignored and removed at start; a normal run leaves none",
       fakes="the state tree holds two temporaries of an interrupted write of slot-0.json (one of them an "
             "invalid state); one assignment is queued",
       expected="the planted temporaries are gone once the worker is ready, slot 0 claims and completes the "
                "assignment, and no temporary file is left in any tree after the drain")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment()
    plane.write_slot(0, {"schema": 2, "phase": "claiming", "request_id": "0" * 32})
    planted = []
    for name, data in ((".slot-0.json.5f3a9c.partial", b'{"schema":2,"phase":"assig'),
                       (".slot-0.json.0b1d2e.partial", canonical({"schema": 2, "phase": "claiming",
                                                                  "request_id": "1" * 32}))):
        path = os.path.join(plane.state_dir, name)
        with open(path, "wb") as handle:
            handle.write(data)
        os.chmod(path, 0o600)
        planted.append(path)
    os.unlink(plane.slot_path(0))  # the temporaries only: no slot state
    # Act
    plane.start()
    plane.wait_ready()
    plane.wait_resolved(res)
    plane.wait_phase(0, None)
    result = plane.stop()
    # Assert
    left = [p for p in planted if os.path.lexists(p)]
    ctx.expect(not left, expected="the planted temporaries removed at start",
               actual=lambda: "still there: %s" % ", ".join(os.path.basename(p) for p in left),
               diagnosis="a temporary of an interrupted write is ignored and removed on the next start")
    claims = plane.server.claims()
    ctx.expect(claims and claims[0].request_id not in ("0" * 32, "1" * 32) and res.resolution == "bundle_accepted",
               expected="a fresh claim that gets the assignment, its bundle accepted",
               actual=lambda: describe_run(plane),
               diagnosis="a temporary file is never read as a state")
    stray = [p for p, _info in _tree_walk(plane) if os.path.basename(p).endswith((".partial", ".tmp"))]
    ctx.expect(not stray, expected="no temporary file in any tree after a normal run",
               actual=lambda: ", ".join(stray[:5]), diagnosis="every write ends in os.replace, or removes its "
                                                              "temporary on failure")
    ctx.expect(result.exit_code == 0, expected="a drain ends with exit 0", actual=lambda: result.describe(),
               diagnosis=drain_diagnosis(result))


@check("state.valid-before-each-call", clauses=["SCAN-STATE-3", "SCAN-STATE-4", "SCAN-STATE-2"], level="MUST",
       title="every slot file seen while the worker runs is canonical and valid for its phase; each call "
             "finds its phase on disk",
       fakes="one assignment; the claim, the first status read and the upload are each held while the slot "
             "file is read, then let through; the slot file is polled all the while",
       expected="claiming with the claim's request id at the claim, assigned at the status read, bundle_ready "
                "with the ready bundle's size and digest at the upload; every version seen canonical, valid "
                "against slot-state.schema.json and the phase table")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment()
    holds = [("claim", "claiming", plane.server.add_fault(faults.hang(), plane.server.claim_match(first=1))),
             ("status", "assigned", plane.server.add_fault(faults.hang(), plane.server.status_match(first=1))),
             ("bundle", "bundle_ready", plane.server.add_fault(faults.hang(), plane.server.bundle_match(first=1)))]
    seen = {}

    def observe():
        raw = plane.slot_raw(0)
        if raw is not None and raw not in seen:
            seen[raw] = len(seen)
        return raw

    # Act
    plane.start()
    at_call = {}
    for verb, _phase, rule in holds:
        plane.wait_for(lambda: (observe(), rule.applied >= 1)[1], "the %s held" % verb)
        at_call[verb] = observe()
        if verb == "bundle":
            ready = os.path.join(plane.bundle_dir, "ready", "%s.jsonl" % res.bundle_id)
            at_call["ready"] = read_bytes(ready)
        rule.release(answer=True)
    plane.wait_for(lambda: (observe(), res.resolution is not None)[1], "the resolution")
    plane.wait_phase(0, None)
    plane.stop()
    # Assert
    slot_schema = _slot_schema()
    for raw, order in sorted(seen.items(), key=lambda item: item[1]):
        problems = slot_file_problems("slot-0.json", raw)
        if not problems:
            problems = _schema.validate(canonical_doc(raw), slot_schema)
        ctx.expect(not problems, expected="every version of slot-0.json canonical and valid for its phase",
                   actual=lambda: "version %d: %s (%r)" % (order + 1, "; ".join(problems[:3]), raw[:160]),
                   diagnosis="validate a state against the schema before each save and write canonical bytes")
    claim = plane.server.claims()[0]
    for verb, phase, _rule in holds:
        doc = canonical_doc(at_call.get(verb))
        ctx.expect(isinstance(doc, dict) and doc.get("phase") == phase,
                   expected="slot-0.json in phase %s when the %s arrives" % (phase, verb),
                   actual=lambda: "it held %r" % ((at_call.get(verb) or b"nothing")[:160],),
                   diagnosis="persist each phase before the request that depends on it (SCAN-STATE-4)")
    ctx.expect(canonical_doc(at_call["claim"]).get("request_id") == claim.request_id,
               expected="the held claim's request id on disk", actual=lambda: at_call["claim"][:160],
               diagnosis="persist the claim's request id in the slot's state before the claim is sent")
    bundle = canonical_doc(at_call["bundle"]).get("bundle") or {}
    put = res.puts[0] if res.puts else None
    ready = at_call.get("ready")
    ctx.expect(ready is not None and put is not None and bundle.get("payload_sha256") == put.digest_header
               == hashlib.sha256(ready).hexdigest() and bundle.get("bytes") == len(ready),
               expected="the ready bundle in ready/ and bundle_ready naming its size and digest before the upload",
               actual=lambda: "ready bundle %s, state bundle %r, upload digest %s" % (
                   "absent" if ready is None else "%d bytes" % len(ready), bundle,
                   put.digest_header if put else None),
               diagnosis="move the bundle into ready/ and persist bundle_ready before the upload (SCAN-STATE-4)")


def canonical_doc(raw):
    """raw parsed strictly; {} when absent or not JSON."""
    try:
        return parse_strict(raw) if raw is not None else {}
    except ValueError:
        return {}


def _unreadable_variants(doc):
    """(label, bytes, mode) of slot files the worker must keep and not act on (SCAN-STATE-5)."""
    good = canonical(doc)
    spaced = good + b" " * (_deploy.MAX_PENDING_BYTES + 1 - len(good))  # strict JSON, but over the bound (D30)
    return [("truncated JSON", good[:len(good) // 2], 0o600),
            ("schema 3", canonical(dict(doc, schema=3)), 0o600),
            ("an unknown member", canonical(dict(doc, claimed_by="someone")), 0o600),
            ("mode 0644", good, 0o644),
            ("larger than MAX_PENDING_BYTES", spaced, 0o600),
            ("owned by another user", good, 0o600)]


@check("state.unreadable-kept", clauses=["SCAN-STATE-5"], level="MUST",
       title="a slot file the worker cannot read is kept byte for byte, its slot makes no request, others work",
       fakes="slots 0 to 5 each hold an unreadable state of a reservation granted to it (truncated JSON, schema "
             "3, an unknown member, mode 0644, over MAX_PENDING_BYTES, owned by another user: root only); the next slot is "
             "free and one assignment is queued",
       expected="no request names the planted reservations, each planted file keeps its bytes and mode, each "
                "planted slot prints the validation line again and again, and the free slot completes the "
                "assignment")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    planted = []
    for slot in range(PLANTED):
        res = plane.add_assignment(queued=False)
        _request_id, doc = plane.grant(res)
        label, data, mode = _unreadable_variants(held_state(doc))[slot]
        path = plane.write_slot(slot, data, mode=mode)
        if label == "owned by another user":
            os.chown(path, OTHER_UID, -1)
        planted.append((slot, label, res, path, data, mode))
    work = plane.add_assignment()
    # Act
    life = plane.start(parallelism=PLANTED + 1)
    plane.wait_resolved(work)
    def settled(slot, res, path, data):  # refused REPEATS times, or (a failure the asserts name) acted on
        return lines_of(life, VALIDATION_LINE % slot) >= REPEATS or plane.server.calls(reservation=res) \
            or read_bytes(path) != data

    plane.wait_for(lambda: all(settled(slot, res, path, data) for slot, _l, res, path, data, _m in planted),
                   "the validation line %d times for each of slots 0 to %d" % (REPEATS, PLANTED - 1),
                   timeout=PHASE_TIMEOUT_S + SCHEDULE_SLACK_S)
    plane.stop(signal.SIGINT)
    # Assert
    ctx.expect(work.resolution == "bundle_accepted", expected="the free slot completes the queued assignment",
               actual=lambda: describe_run(plane), diagnosis="a slot that cannot read its state holds up no other")
    for slot, label, res, path, data, mode in planted:
        asked = plane.server.calls(reservation=res)
        ctx.expect(not asked, expected="no request for reservation %d (slot %d: %s)" % (res.reservation_id, slot,
                                                                                           label),
                   actual=lambda: "%d request(s), the first %s %s" % (len(asked), asked[0].method, asked[0].path),
                   diagnosis="a state the worker cannot read is not acted on: the slot waits")
        now = read_bytes(path)
        info = os.lstat(path) if os.path.lexists(path) else None
        ctx.expect(now == data and info is not None and stat.S_IMODE(info.st_mode) == mode,
                   expected="slot-%d.json (%s) kept byte for byte, mode %04o" % (slot, label, mode),
                   actual=lambda: "it is %s" % ("gone" if now is None else "%d bytes, mode %04o" % (
                       len(now), stat.S_IMODE(info.st_mode))),
                   diagnosis="never overwrite, rename or delete a state the worker cannot read")


def _odd_entries():
    def link(plane, target):
        os.symlink(target, plane.slot_path(0))

    def directory(plane, _target):
        os.mkdir(plane.slot_path(0), 0o700)

    return [("a symlink to a harness file", link), ("a directory", directory)]


@check("state.links-refused", clauses=["SCAN-STATE-6"], level="MUST",
       title="a slot file that is a symlink or a directory is refused at start: exit 1, no request",
       fakes="slot-0.json is a symlink to a valid state file outside the trees (its reservation granted), or a "
             "directory; one assignment is queued",
       expected="the worker exits 1 before any request; the link's target keeps its bytes and mode")
def _(ctx):
    def act(label, make):
        # Arrange
        plane = ctx.plane()
        res = plane.add_assignment(queued=False)
        _request_id, doc = plane.grant(res)
        plane.add_assignment()
        target = os.path.join(ctx.tmpdir("state-links-%d" % id(plane)), "harness-state.json")
        data = canonical(held_state(doc))
        with open(target, "wb") as handle:
            handle.write(data)
        os.chmod(target, 0o600)
        os.makedirs(plane.state_dir, 0o700, exist_ok=True)
        make(plane, target)
        # Act
        life = plane.start()
        result = life.wait(PHASE_TIMEOUT_S)
        # Assert
        ctx.expect(not result.timed_out and result.exit_code == EXIT_SLOT_DIED,
                   expected="exit 1 at start (%s)" % label, actual=lambda: result.describe(),
                   diagnosis="lstat each slot file at start and refuse a link or an odd file")
        ctx.expect(not plane.server.calls(), expected="no request (%s)" % label,
                   actual=lambda: describe_run(plane),
                   diagnosis="a slot file that is a link or an odd file ends the worker at start, before its first "
                             "request")
        info = os.lstat(target)
        ctx.expect(read_bytes(target) == data and stat.S_IMODE(info.st_mode) == 0o600,
                   expected="the link's target untouched (%s)" % label,
                   actual=lambda: "now %r, mode %04o" % (read_bytes(target)[:80], stat.S_IMODE(info.st_mode)),
                   diagnosis="nothing is read through a link or written to it")

    each_variant(ctx, _odd_entries(), act)


def _legacy_variants():
    return [("claiming", "claim"), ("assigned", "status")]


@check("state.legacy-migrated", clauses=["SCAN-STATE-7"], level="MUST",
       title="a schema-less legacy state is rewritten as schema 2 on its first load, then resumed",
       fakes="slot-0.json is the upstream's legacy claiming {phase, request_id} (its reservation queued) or "
             "assigned {phase, assignment} (granted); the first request is held while the file is read",
       expected="at the first request slot-0.json is the schema-2 state (claiming: the same request id; "
                "assigned: runner null, retained_work []); the assignment then completes")
def _(ctx):
    def act(phase, verb):
        # Arrange
        plane = ctx.plane()
        res = plane.add_assignment(queued=(phase == "claiming"))
        if phase == "claiming":
            legacy = {"phase": "claiming", "request_id": "ab" * 16}
            wanted = {"schema": 2, "phase": "claiming", "request_id": "ab" * 16}
        else:
            _request_id, doc = plane.grant(res)
            legacy = {"phase": "assigned", "assignment": doc}
            wanted = held_state(doc)
        plane.write_slot(0, legacy)
        match = plane.server.claim_match(first=1) if verb == "claim" else plane.server.status_match(first=1)
        hold = plane.server.add_fault(faults.hang(), match)
        # Act
        plane.start()
        plane.wait_for(lambda: hold.applied >= 1, "the first %s held" % verb)
        on_disk = plane.slot_raw(0)
        hold.release(answer=True)
        plane.wait_resolved(res)
        plane.wait_phase(0, None)
        plane.stop()
        # Assert
        ctx.expect(on_disk == canonical(wanted), expected="the legacy %s state rewritten as %s before the first "
                                                          "request" % (phase, canonical(wanted)[:120]),
                   actual=lambda: "slot-0.json held %r" % ((on_disk or b"nothing")[:200],),
                   diagnosis="migrate a schema-less state on its first load and persist it before acting")
        ctx.expect(res.resolution == "bundle_accepted", expected="the migrated %s state resumed to a bundle" % phase,
                   actual=lambda: describe_run(plane),
                   diagnosis="after migrating a legacy state, resume from the phase it recorded, up to the upload of "
                             "its bundle")

    each_variant(ctx, _legacy_variants(), act)


def _caught_up(plane):
    """The progress cursor is past the journal's last event to deliver: the events after it on disk
    have no reservation (D38: skipped ones reach the disk with the next delivered one)."""
    events, cursor = plane.journal(), plane.read_json("progress-cursor.json")
    if not events or not isinstance(cursor, dict) or not isinstance(cursor.get("sequence"), int):
        return False
    return all(event.get("reservation_id") is None for event in events
               if not isinstance(event.get("sequence"), int) or event["sequence"] > cursor["sequence"])


def _settled(plane):
    """A condition: the trees have not changed for SETTLE_S (the first worker asleep)."""
    seen = {"files": None, "since": None}

    def condition():
        files = _snapshot(plane)
        if files != seen["files"]:
            seen["files"], seen["since"] = files, time.monotonic()
            return False
        return time.monotonic() - seen["since"] >= SETTLE_S and _caught_up(plane)
    return condition


def _snapshot(plane, skip=("remote-worker.lock",)):
    files = {}
    for path, info in _tree_walk(plane):
        if os.path.basename(path) in skip or stat.S_ISDIR(info.st_mode):
            continue
        files[path] = (read_bytes(path), stat.S_IMODE(info.st_mode), info.st_mtime_ns)
    return files


@check("state.one-worker", clauses=["SCAN-STATE-8"], level="MUST",
       title="a second worker on the same trees exits 75 with no request and no file changed; the first goes on",
       fakes="the first worker is told there is no work for a while; a second and a third worker (each with a "
             "token the server does not know, so their requests stand out) start on the same trees",
       expected="both exit 75 without a request, no file but the lock file changed, and the first keeps "
                "running and ends its drain with exit 0")
def _(ctx):
    # Arrange
    plane = ctx.plane(retry_after=QUIET_RETRY_AFTER_S)
    other_token = os.path.join(ctx.tmpdir("state-one-worker"), "token")
    fd = os.open(other_token, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, b"another-worker-token-0123456789abcdef\n")
    os.close(fd)
    first = plane.start()
    plane.wait_ready(first)
    plane.wait_claims(1)
    plane.wait_for(_settled(plane), "the trees unchanged for %.1f s after the no-work answer" % SETTLE_S)
    before = _snapshot(plane)
    # Act
    results = []
    for _n in range(2):
        extra = plane.lifecycle(token_file=other_token).start()
        results.append(extra.wait(PHASE_TIMEOUT_S))
    after = _snapshot(plane)
    still = first.running()
    result = first.stop(timeout=RUN_TIMEOUT_S)
    # Assert
    for n, extra_result in enumerate(results, 2):
        ctx.expect(not extra_result.timed_out and extra_result.exit_code == EXIT_LOCKED,
                   expected="worker %d exits 75 (another worker holds the tree)" % n,
                   actual=lambda: extra_result.describe(),
                   diagnosis="take an exclusive flock on <state>/remote-worker.lock before anything else, and "
                             "never remove or replace the lock file")
    foreign = [c for c in plane.server.calls() if c.auth != "ok"]
    ctx.expect(not foreign, expected="no request from the refused workers",
               actual=lambda: "%d request(s) with their token, the first %s %s" % (
                   len(foreign), foreign[0].method, foreign[0].path),
               diagnosis="a worker refused the tree's lock exits at once, before any request")
    changed = sorted(set(before) ^ set(after) | set(p for p in before if p in after and before[p] != after[p]))
    ctx.expect(not changed, expected="no file changed but the lock file",
               actual=lambda: "changed: %s" % ", ".join(os.path.relpath(p, plane.home) for p in changed[:5]),
               diagnosis="a refused worker exits before it writes anything")
    ctx.expect(still and result.exit_code == 0, expected="the first worker runs on and drains with exit 0",
               actual=lambda: "running: %s; %s" % (still, result.describe()),
               diagnosis=stop_unnoticed(result) or (
                   "a refused worker must not disturb the one holding the lock: the first worker ended while they "
                   "started, and it must run on until its SIGTERM" if not still else DRAIN_EXIT))

