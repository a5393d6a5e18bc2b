"""Progress: phase events of an exact shape in a journal, delivered in order at least once, a
cursor that moves only past what the server acknowledged, delivery that never holds up work, and
a journal that does not grow for ever (SCAN-PROGRESS-1 to SCAN-PROGRESS-5).

Progress is what an operator watches, and the server deduplicates it by sequence. A cursor
written before the answer loses an event at a crash; one never written resends the whole journal
after every restart; an acknowledgement taken on its status alone counts events the server never
stored. A progress request that shares a lock or a thread with the slots turns a slow progress
endpoint into a slow scan fleet.
"""

import json
import os

from conformance import schema as _schema
from conformance.checks import check
from conformance.checks.scan._common import (PHASE_TIMEOUT_S, SCHEDULE_SLACK_S, describe_run, drain_diagnosis,
                                              each_variant, faults, live_stdout, private_dirs)
from conformance.planes.scan import canonical, instant

SCHEMA_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))), "contract", "schemas", "scan", "progress-event.schema.json")
CURSOR_SCHEMA = 1  # SCAN-PROGRESS-3
PROGRESS_REQUEST_TIMEOUT_S = 2.0  # SCAN-PROGRESS-4: one progress request, whole
MAX_JOURNAL_BYTES = 1 << 20  # SCAN-PROGRESS-5
# progress.rotate: a planted journal a little over MAX_JOURNAL_BYTES, all delivered but its last line.
PLANTED_JOURNAL_BYTES = MAX_JOURNAL_BYTES + (64 << 10)
# progress.rotate: the journal after rotation holds one assignment's events, far less than this.
ROTATED_JOURNAL_MAX_BYTES = 256 << 10
# progress.hang: assignments worked one after the other in each run.
HANG_ASSIGNMENTS = 4
MAX_JOURNAL_HELD_BYTES = 8 << 20  # SCAN-PROGRESS-5, D41: no event is written past this size
FULL_LINE = "worker: progress journal full, new events dropped"  # SCAN-OUTPUT-1
# progress.journal-held: the planted journal's events are this long (a few thousand lines for 8 MiB,
# so that the worker's read of it at start costs little), and the wait for the outbox to come back
# after progress is answered again: its backoff reaches PROGRESS_RETRY_MAX_S (30 s) at most.
HELD_EVENT_BYTES = 4096
OUTBOX_RETURN_S = 35.0


def event_schema():
    with open(SCHEMA_PATH, "rb") as handle:
        return json.loads(handle.read().decode("utf-8"))


def journal_lines(plane):
    """The raw lines of <state>/events.jsonl (without their newline)."""
    try:
        with open(os.path.join(plane.state_dir, "events.jsonl"), "rb") as handle:
            return handle.read().split(b"\n")[:-1]
    except OSError:
        return []


def sequences(calls):
    return [c.doc.get("sequence") if isinstance(c.doc, dict) else None for c in calls]


@check("progress.events", clauses=["SCAN-PROGRESS-1", "SCAN-PROGRESS-2", "SCAN-PROGRESS-3"], level="MUST",
       title="phase events of the exact shape, journalled and delivered in order, the cursor past them",
       fakes="two assignments, one after the other; every progress event acknowledged; then a drain",
       expected="each journal line a canonical event of the schema, sequences 1, 2, 3, ...; every event with a "
                "reservation POSTed as its journal line's bytes, in order, once; the cursor {schema: 1, sequence: "
                "N}, N at least the last event delivered")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    reservations = [plane.add_assignment(), plane.add_assignment()]
    # Act
    plane.start()
    for res in reservations:
        plane.wait_resolved(res)
    result = plane.stop()
    # Assert
    ctx.expect(result.exit_code == 0, expected="a drain ending with exit 0", actual="exit %s" % result.exit_code,
               diagnosis=drain_diagnosis(result))
    lines = journal_lines(plane)
    schema = event_schema()
    events = []
    for number, line in enumerate(lines, 1):
        try:
            event = json.loads(line.decode("ascii"))
        except ValueError:
            ctx.fail(expected="every journal line one JSON object", actual="line %d: %r" % (number, line[:120]),
                     diagnosis="write each journal line as one canonical JSON object and a newline, appended whole")
        errors = _schema.validate(event, schema)
        ctx.expect(not errors and canonical(event) == line,
                   expected="every journal line a canonical progress event (progress-event schema)",
                   actual=lambda: "line %d: %s" % (number, "; ".join(errors[:3]) or "not canonical"),
                   diagnosis="write exactly the members of SCAN-PROGRESS-1, canonical, one per line")
        events.append(event)
    numbers = [e["sequence"] for e in events]
    ctx.expect(bool(numbers) and numbers == list(range(1, len(numbers) + 1)),
               expected="journal sequences 1, 2, 3, ... in order", actual="sequences %s" % numbers[:20],
               diagnosis="number the journal's events 1, 2, 3, ... in the order they are written, with no gap")
    by_sequence = dict((e["sequence"], line) for e, line in zip(events, lines))
    sent = plane.server.calls("progress")
    sent_numbers = sequences(sent)
    wanted = [e["sequence"] for e in events if e["reservation_id"] is not None]
    ctx.expect(sent_numbers == wanted,
               expected="every event with a reservation POSTed once, in order: %s" % wanted[:20],
               actual="POSTed %s" % sent_numbers[:20],
               diagnosis="deliver the journal's events with a reservation in sequence order, none skipped")
    for call in sent:
        seq = call.doc.get("sequence") if isinstance(call.doc, dict) else None
        ctx.expect(not call.problems and call.body == by_sequence.get(seq)
                   and call.path.endswith("/%s/progress" % call.doc.get("reservation_id")),
                   expected="each POST the canonical bytes of its journal line, to its reservation's path",
                   actual=lambda: "sequence %s: %s" % (seq, "; ".join(call.problems) or "body or path differs"),
                   diagnosis="POST each event's journal line byte for byte to its own reservation's progress path")
    # The cursor passes every delivered event; the trailing events without a reservation (the slot's
    # "stopped") may be journalled after the final flush ended, so they are allowed to trail it.
    cursor = plane.read_json("progress-cursor.json")
    delivered = wanted[-1] if wanted else 0
    ctx.expect(isinstance(cursor, dict) and sorted(cursor) == ["schema", "sequence"]
               and cursor["schema"] == CURSOR_SCHEMA and delivered <= cursor["sequence"] <= numbers[-1],
               expected="progress-cursor.json = {schema: 1, sequence: N} after the drain, N from the last event "
                        "delivered (%d) to the last journalled (%d)" % (delivered, numbers[-1]),
               actual="%r" % (cursor,),
               diagnosis="move the cursor past each delivered or skipped event")


@check("progress.resume", clauses=["SCAN-PROGRESS-3", "SCAN-PROGRESS-2"], level="MUST",
       title="after a crash with a progress answer lost, delivery resumes at that event, nothing earlier resent",
       fakes="the second progress POST is kept by the server but held unanswered; the worker is SIGKILLed there "
             "and restarted",
       expected="the cursor on disk at the crash below that event; the restarted worker's first progress POST "
                "repeats its sequence (the server says replayed) and no earlier one is sent again")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment()
    # Act
    first = plane.start(kill_at=plane.held("progress", nth=2, processed=True))
    first.wait(PHASE_TIMEOUT_S)
    before = list(plane.server.calls("progress"))
    cursor_raw = (first.state_files or {}).get("progress-cursor.json")
    second = plane.restart()
    plane.wait_resolved(res)
    plane.stop()
    # Assert
    ctx.expect(first.fired and len(before) >= 2, expected="the second progress POST held, then the crash",
               actual=lambda: describe_run(plane),
               diagnosis="journal the events and send them one at a time: the worker never held a second progress POST "
                         "this check could crash it on")
    held_seq = sequences(before)[1]
    cursor = json.loads(cursor_raw.decode("ascii")) if cursor_raw else {}
    ctx.expect(isinstance(cursor.get("sequence"), int) and cursor["sequence"] < held_seq,
               expected="the cursor at the crash below the unacknowledged event %d" % held_seq,
               actual="cursor %r" % (cursor,),
               diagnosis="write the cursor only after the server acknowledged the event")
    after = plane.server.calls("progress", since=second.t_start)
    numbers = sequences(after)
    ctx.expect(bool(numbers) and numbers[0] == held_seq,
               expected="the restarted worker's first progress POST carries sequence %d" % held_seq,
               actual="its progress POSTs carried %s" % numbers[:10],
               diagnosis="resume delivery right after the cursor")
    ctx.expect(after[0].replayed, expected="the server saw event %d again (replayed)" % held_seq,
               actual="not a replay",
               diagnosis="after a restart, send again the event the server has not acknowledged, with its sequence")
    ctx.expect(all(n >= held_seq for n in numbers),
               expected="no event before %d sent again" % held_seq, actual="sent %s" % numbers[:10],
               diagnosis="after a restart, resume delivery after the cursor: never re-send an event the server "
                         "acknowledged")


def _ack(kind):
    def body(call, status, doc):
        event = call.doc or {}
        ack = {"accepted": True, "reservation_id": event.get("reservation_id"), "sequence": event.get("sequence"),
               "received_at": "2026-01-01T00:00:00.000Z", "replayed": False}
        if kind == "not-accepted":
            ack["accepted"] = False
        elif kind == "other-sequence":
            ack["sequence"] = (event.get("sequence") or 0) + 1000
        elif kind == "replayed-text":
            ack["replayed"] = "no"
        elif kind == "no-received-at":
            del ack["received_at"]
        elif kind == "server-error":
            return 500, {"error": {"code": "internal", "message": "try later"}}
        elif kind == "stale":
            return 410, {"error": {"code": "progress_stale", "message": "resolved"}}
        return 200, ack
    return body


BAD_ACKS = [(kind, kind) for kind in ("not-accepted", "other-sequence", "replayed-text", "no-received-at",
                                      "server-error")]


@check("progress.acknowledgement", clauses=["SCAN-PROGRESS-2"], level="MUST",
       title="a progress answer that does not acknowledge the event gets it sent again; 410 progress_stale counts",
       fakes="the first progress POST is answered: 200 with accepted false, another sequence, replayed \"no\" or "
             "no received_at; a 500; or 410 progress_stale",
       expected="the next progress POST carries the same sequence (for 410 progress_stale: a later one)")
def _(ctx):
    def act(label, kind):
        # Arrange
        plane = ctx.plane()
        res = plane.add_assignment()
        plane.server.script("progress", body=_ack(kind), first=1)
        # Act
        plane.start()
        plane.wait_resolved(res)
        plane.wait_calls("progress", 2)
        plane.stop()
        # Assert
        numbers = sequences(plane.server.calls("progress"))
        if kind == "stale":
            ctx.expect(numbers[1] > numbers[0], expected="after 410 progress_stale, the next event (variant %s)"
                       % label, actual="sequences %s" % numbers[:6],
                       diagnosis="a 410 progress_stale counts as delivered")
        else:
            ctx.expect(numbers[1] == numbers[0],
                       expected="the same event sent again after an answer that does not acknowledge it "
                                "(variant %s)" % label,
                       actual="sequences %s" % numbers[:6],
                       diagnosis="count an event delivered only for a 200 with accepted true, its reservation "
                                 "and sequence, a string received_at and a boolean replayed")

    each_variant(ctx, BAD_ACKS + [("stale", "stale")], act)


def _timed_run(ctx, hang):
    """Seconds from the ready line to the last of HANG_ASSIGNMENTS resolved, and the plane."""
    plane = ctx.plane()
    reservations = [plane.add_assignment() for _ in range(HANG_ASSIGNMENTS)]
    if hang:
        plane.server.add_fault(faults.hang(), plane.server.progress_match())
    life = plane.start()
    plane.wait_ready()
    for res in reservations:
        plane.wait_resolved(res, timeout=PHASE_TIMEOUT_S * 2)
    took = max(r.puts[-1].t for r in reservations if r.puts) - life.t_start
    plane.stop()
    return took, plane, reservations


@check("progress.never-holds-up", clauses=["SCAN-PROGRESS-4"], level="MUST",
       title="with every progress request hanging, claims and uploads keep their timing",
       fakes="three runs of four assignments each: with progress answered, with every progress request "
             "hanging (never answered), and answered again",
       expected="with progress hanging, the last upload comes no later than in the faster answered run plus one "
                "progress timeout (2 s) and the scheduling slack; every progress request ends within its 2 s")
def _(ctx):
    # Arrange, Act: the answered run before and after the hung one, the faster counting, so that a
    # load spike during one answered run does not widen the bound (a worker that sends progress
    # under the journal lock was once let through that way).
    first, _plane, _res = _timed_run(ctx, hang=False)
    hung, plane, reservations = _timed_run(ctx, hang=True)
    answered = min(first, _timed_run(ctx, hang=False)[0])
    # Assert
    ctx.note("last upload: %.2f s with progress answered (faster of two runs), %.2f s with it hanging"
             % (answered, hung))
    ctx.expect(all(r.resolution == "bundle_accepted" for r in reservations),
               expected="every assignment uploaded with progress hanging", actual=lambda: describe_run(plane),
               diagnosis="keep claims and uploads going while progress requests hang: progress never holds up work")
    bound = answered + PROGRESS_REQUEST_TIMEOUT_S + SCHEDULE_SLACK_S
    ctx.expect(hung <= bound,
               expected="the last upload within %.1f s of the start (answered run %.2f s + %.1f s + %.1f s slack)"
                        % (bound, answered, PROGRESS_REQUEST_TIMEOUT_S, SCHEDULE_SLACK_S),
               actual="%.2f s" % hung,
               diagnosis="send progress from its own thread, bounded, sharing no lock a slot waits on")
    calls = plane.server.calls("progress")
    long_ones = [c for c in calls if c.exchange.t_end is not None
                 and c.exchange.t_end - c.t > PROGRESS_REQUEST_TIMEOUT_S + SCHEDULE_SLACK_S]
    ctx.expect(not long_ones, expected="every hung progress request closed by the worker within %.1f s"
               % PROGRESS_REQUEST_TIMEOUT_S, actual="%d lasted longer" % len(long_ones),
               diagnosis="bound each progress request with its own 2 s timeout and close it then")


def _planted_event(sequence, pad):
    return {"sequence": sequence, "slot_id": 0, "phase": "idle", "reservation_id": None, "source": None,
            "scan_deadline_at": None, "assignment_deadline_at": None,
            "progress": {"attempt": 1, "reason": pad}, "timestamp": instant(0), "phase_started_at": instant(0)}


def _plant_journal(plane, size=PLANTED_JOURNAL_BYTES, pad_chars=100, head_reservation=None):
    """A journal of events without a reservation, at least `size` bytes; with head_reservation, its
    first event names that reservation and the cursor is before it, else the cursor is at the last
    event but one. Returns the last sequence."""
    private_dirs(plane.state_dir)
    pad = "planted_" + "p" * pad_chars
    lines, total, sequence = [], 0, 0
    while total < size:
        sequence += 1
        event = _planted_event(sequence, pad)
        if sequence == 1 and head_reservation is not None:
            event.update(phase="assigned", reservation_id=head_reservation)
        line = canonical(event) + b"\n"
        lines.append(line)
        total += len(line)
    cursor = 0 if head_reservation is not None else sequence - 1
    for name, data in (("events.jsonl", b"".join(lines)),
                       ("progress-cursor.json", canonical({"schema": CURSOR_SCHEMA, "sequence": cursor}))):
        fd = os.open(os.path.join(plane.state_dir, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    return sequence


@check("progress.rotate", clauses=["SCAN-PROGRESS-5"], level="MUST",
       title="a journal over 1 MiB is replaced by an empty one once delivered; sequences go on after the cursor",
       fakes="before the start, a journal of about 1.06 MiB of events without a reservation, the cursor at its "
             "last but one; then one assignment and a drain",
       expected="the journal afterwards far below 1 MiB, holding only events after the planted ones; every "
                "progress POST with a sequence after the planted ones")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    last = _plant_journal(plane)
    res = plane.add_assignment()
    # Act
    plane.start()
    plane.wait_resolved(res)
    plane.stop()
    # Assert
    size = os.path.getsize(os.path.join(plane.state_dir, "events.jsonl"))
    numbers = [e.get("sequence") for e in plane.journal()]
    ctx.note("journal after the run: %d bytes, sequences %s; planted up to %d; sent %s" % (
        size, numbers, last, sequences(plane.server.calls("progress"))))
    ctx.expect(size <= ROTATED_JOURNAL_MAX_BYTES and numbers and min(numbers) > last,
               expected="the journal rotated: at most %d bytes, only events after %d" % (ROTATED_JOURNAL_MAX_BYTES,
                                                                                          last),
               actual="%d bytes, sequences %s..%s" % (size, numbers[0] if numbers else None,
                                                      numbers[-1] if numbers else None),
               diagnosis="once the cursor has caught up with a journal over MAX_JOURNAL_BYTES, replace it by an "
                         "empty one atomically")
    sent = sequences(plane.server.calls("progress"))
    ctx.expect(bool(sent) and min(sent) > last,
               expected="every progress POST after sequence %d (the numbering goes on after the cursor)" % last,
               actual="sequences %s" % sent[:10],
               diagnosis="after the journal rotates, go on numbering after the cursor: a rotation never restarts the "
                         "sequence")
    cursor = plane.read_json("progress-cursor.json")
    ctx.expect(isinstance(cursor, dict) and sorted(cursor) == ["schema", "sequence"]
               and cursor["schema"] == CURSOR_SCHEMA and max(sent) <= cursor["sequence"] <= numbers[-1],
               expected="the cursor {schema: 1, sequence: N}, N between the last event delivered (%d) and the last "
                        "journalled (%d)" % (max(sent), numbers[-1]), actual="%r" % (cursor,),
               diagnosis="write progress-cursor.json as {schema: 1, sequence: N}, N the last event the server "
                         "acknowledged")


def _size(path):
    """The file's size; infinite while it is absent (a worker may replace it by unlink and create)."""
    try:
        return os.path.getsize(path)
    except OSError:
        return float("inf")


@check("progress.journal-held", clauses=["SCAN-PROGRESS-5", "SCAN-OUTPUT-1"], level="MUST",
       title="a journal of 8 MiB the server does not take gets no more events; once delivered, events go on (D41)",
       fakes="before the start, a journal of 8 MiB whose first event names the first assignment, the cursor "
             "before it, and every progress request answered 500; that assignment; then progress answered "
             "again, a second assignment and a drain",
       expected="the first assignment resolved with the journal unchanged, byte for byte, and `%s` printed once; "
                "then the journal replaced, and the second assignment's events written with the sequences after "
                "the planted ones and sent" % FULL_LINE)
def _(ctx):
    # Arrange
    plane = ctx.plane()
    first = plane.add_assignment()
    last = _plant_journal(plane, MAX_JOURNAL_HELD_BYTES, HELD_EVENT_BYTES, head_reservation=first.reservation_id)
    path = os.path.join(plane.state_dir, "events.jsonl")
    with open(path, "rb") as handle:
        planted = handle.read()
    refusing = plane.server.add_fault(faults.status(500), plane.server.progress_match())
    # Act: the outage
    life = plane.start()
    plane.wait_resolved(first)
    plane.wait_for(lambda: plane.server.calls("progress"), "a progress request for the journal's oldest event",
                   diagnosis="send the events past the cursor that name a reservation, oldest first "
                             "(SCAN-PROGRESS-2)")
    try:
        with open(path, "rb") as handle:
            held = handle.read()
    except OSError:
        held = b""  # gone: not the journal it was, which the expectation below says
    printed = [line for line in live_stdout(life) if line == FULL_LINE]
    # Assert
    ctx.note("journal planted: %d bytes, sequences 1..%d; after the first assignment: %d bytes" % (
        len(planted), last, len(held)))
    ctx.expect(first.resolution == "bundle_accepted", expected="the first assignment accepted while progress failed",
               actual=lambda: describe_run(plane),
               diagnosis="progress never holds up work: claim, scan and upload with the journal full")
    ctx.expect(held == planted,
               expected="the journal unchanged while it holds %d bytes the server has not taken"
                        % MAX_JOURNAL_HELD_BYTES,
               actual="%d bytes, %+d" % (len(held), len(held) - len(planted)),
               diagnosis="at MAX_JOURNAL_HELD_BYTES write no event to the journal: a server that never takes "
                         "the oldest one would otherwise grow the state tree until the disk is full (D41)")
    ctx.expect(len(printed) == 1, expected="%r printed once as the journal filled" % FULL_LINE,
               actual="printed %d time(s)" % len(printed),
               diagnosis="say once that new events are dropped, not once per event (SCAN-OUTPUT-1)")
    # Act: progress answered again
    refusing.remove()
    plane.wait_for(lambda: _size(path) < MAX_JOURNAL_BYTES, "the journal delivered and replaced",
                   timeout=OUTBOX_RETURN_S,
                   diagnosis="once the server answers progress, deliver the held journal and replace it (the "
                             "outbox's backoff is at most 30 s)")
    second = plane.add_assignment()
    plane.wait_resolved(second)
    plane.wait_calls("progress", 1, reservation=second)
    plane.stop()
    # Assert
    numbers = [e.get("sequence") for e in plane.journal()]
    sent = [e.get("reservation_id") for e in plane.journal()]
    ctx.note("after the outage: journal sequences %s..%s" % (numbers[0] if numbers else None,
                                                              numbers[-1] if numbers else None))
    ctx.expect(bool(numbers) and numbers[0] == last + 1 and second.reservation_id in sent,
               expected="the journal replaced, its events numbered from %d (after the planted ones, none taken by "
                        "a dropped event) and holding the second assignment's" % (last + 1),
               actual="sequences %s..%s; reservations named %s" % (
                   numbers[0] if numbers else None, numbers[-1] if numbers else None,
                   sorted(set(r for r in sent if r is not None))),
               diagnosis="a dropped event takes no sequence, and once the journal is delivered and replaced, "
                         "write events again")


@check("progress.optional", clauses=["SCAN-PROGRESS-6", "SCAN-ARGV-1"], level="MUST",
       title="with --no-progress no progress is sent and no journal or cursor is kept (D31)",
       fakes="one assignment; the worker started with --no-progress; then a drain",
       expected="the assignment resolved; no progress request; no events.jsonl and no progress-cursor.json in the "
                "state tree; exit 0")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment()
    # Act
    plane.start(extra=["--no-progress"])
    plane.wait_resolved(res)
    result = plane.stop()
    # Assert
    kept = [name for name in ("events.jsonl", "progress-cursor.json") if name in plane.listing("state")]
    ctx.expect(res.resolution == "bundle_accepted" and result.exit_code == 0,
               expected="the assignment accepted and a drain ending with exit 0",
               actual=lambda: "exit %s; %s" % (result.exit_code, describe_run(plane)),
               diagnosis=drain_diagnosis(result) if res.resolution == "bundle_accepted"
               else "with --no-progress, claim, scan and upload as usual: only progress is left out")
    ctx.expect(not plane.server.calls("progress") and not kept,
               expected="no progress request and no journal or cursor",
               actual="%d progress request(s); state tree holds %s" % (len(plane.server.calls("progress")), kept),
               diagnosis="--no-progress turns the outbox and its journal off, as the upstream's command line has "
                         "none (D31)")
