"""Peer variety: the scan server as the upstream's real peers may write it (SCAN-PEER-1 to SCAN-PEER-5).

The upstream worker reads every answer with json.loads(), the members it needs with .get(), its
numbers with int() and its instants with datetime.fromisoformat(); it stores any JSON object a 201
carries.  A real scan server, written by people who never saw this contract, may therefore add
members in a later release, write 5.0 or "5" where we write 5, send instants with an offset or
without a zone, indent its JSON, answer an upload 201, or resolve an assignment as expired in the
receipt of the very upload that arrived too late.  Each check here serves one such variant
(conformance/dialect.py does the generic rewrites, the plane's `dialect` option applies them to
every answer) and judges only what the platform observes: requests, receipts, the slot file, the
exit status, the lines printed.
"""

from conformance.checks import check
from conformance.checks.scan._common import (CLOCK_EPSILON_S, PHASE_TIMEOUT_S, SCHEDULE_SLACK_S, calls, describe_run,
                                             drain_diagnosis, each_variant, live_stdout, runner_roots, stdout_lines,
                                             wait_between)
from conformance.checks.scan.token import REEXEC_READY_S
from conformance.runner import read_cmdline

# SCAN-OUTPUT-1: the summaries a failed step prints; a variant the upstream reads prints none of them.
FAILED_STEP_SUMMARIES = ("worker API request failed", "worker network operation failed",
                         "worker protocol or state validation failed", "local I/O operation failed",
                         "worker operation failed")
# SCAN-PEER-5: the upstream's launch lines, each as its argparse takes it (label, argv from (origin, token)).
LAUNCH_LINES = [
    ("--serv --tok --para", lambda origin, token: ["--serv", origin, "--tok", token, "--para", "2"]),
    ("--s= --t= --p=, two trailing slashes, +2",
     lambda origin, token: ["--s=" + origin + "//", "--t=" + token, "--p=+2"]),
    ("--server --token= --parallelism 02", lambda origin, token: ["--server", origin, "--token=" + token,
                                                                   "--parallelism", "02"]),
]
LAUNCH_SLOTS = 2
# SCAN-PEER-1: Retry-After spellings the upstream's int() reads as 1 (the plane's retry_after option).
RETRY_AFTER_FORMS = [("+1", "+1"), ("01", "01"), ("1 with spaces", " 1 ")]
RETRY_AFTER_S = 1
# The error delay of the Retry-After check: far from Retry-After, so the two cannot be mistaken.
LONG_ERROR_DELAY_S = 5.0
# SCAN-PEER-3: an assignment whose deadline has passed, served in another zone.
PAST_DEADLINE_S = -5.0
PAST_DEADLINE_POLL_S = 0.3
PAST_DEADLINE_LINE = "worker slot 0: reservation %d is past its deadline; waiting for the server"
# SCAN-PEER-1: an error body as a later server release may write it: a float and members nobody defined.
CONFLICT_CODE = "bundle_conflict"
# The poll interval of the error-body check: long enough to read the first strike off disk.
STRIKE_POLL_S = 2.0


def failed_lines(lines):
    """The stdout lines that tell of a failed step."""
    return [line for line in lines if line.startswith("worker slot ")
            and any(line.endswith(": " + summary) or (": %s (" % summary) in line for summary in FAILED_STEP_SUMMARIES)]


def run_accepted(ctx, label, **plane_options):
    """One assignment on a plane with these options, to its resolution and a drain; checks it was scanned
    and accepted with no failed step, and returns (plane, reservation, stdout lines)."""
    # Arrange
    plane = ctx.plane(**plane_options)
    res = plane.add_assignment()
    # Act
    plane.start()
    plane.wait_resolved(res)
    result = plane.stop()
    # Assert
    lines = stdout_lines(result)  # the whole run's: a failure after the resolution counts too
    expect_accepted(ctx, plane, res, lines, result, label)
    return plane, res, lines


def expect_accepted(ctx, plane, res, lines, result, label):
    ctx.expect(res.resolution == "bundle_accepted" and res.resolved_by == "bundle" and not res.terminals
               and len([c for c in res.puts if c.complete]) == 1,
               expected="%s: the assignment scanned, its bundle accepted at the first upload, no report" % label,
               actual=lambda: "resolution %s by %s, %d report(s), %d upload(s); %s" % (
                   res.resolution, res.resolved_by, len(res.terminals), len(res.puts), describe_run(plane)),
               diagnosis="read the members the worker needs, as the upstream reads them, and ignore the rest")
    ctx.expect(not failed_lines(lines),
               expected="%s: no failed step" % label, actual=lambda: "stdout %r" % failed_lines(lines)[:3],
               diagnosis="a variant the upstream reads is no protocol error")
    ctx.expect(not plane.bundle_problems(res),
               expected="%s: the bundle names the reservation as the worker reads it" % label,
               actual=lambda: "; ".join(plane.bundle_problems(res)[:3]),
               diagnosis="write the reservation's identity in the worker's own form (whole numbers)")
    ctx.expect(result.exit_code == 0, expected="%s: the drain ends with exit 0" % label,
               actual="exit %s" % result.exit_code,
               diagnosis=drain_diagnosis(result))


@check("peer.assignment-members", clauses=["SCAN-PEER-2", "SCAN-PEER-1", "SCAN-CLAIM-6"], level="MUST",
       title="members nobody defined, at every level of every answer, are ignored",
       fakes="one assignment; every answer (the 201 and its assignment, reservation, deadlines and targets, the "
             "status, the receipt, the progress acknowledgements) carries a member zz_added_by_a_later_release "
             "holding an object, a list with a float, a string and null",
       expected="the assignment scanned and its bundle accepted at the first upload; no report, no failed step; "
                "exit 0 after the drain")
def _(ctx):
    run_accepted(ctx, "unknown members", dialect=("members",))


@check("peer.assignment-floats", clauses=["SCAN-PEER-2", "SCAN-PEER-1"], level="MUST",
       title="whole numbers written as floats (5.0) are read as the upstream's int() reads them",
       fakes="one assignment; every whole number of every answer is written as a float: reservation_id, "
             "attempts, declared_bundle_bytes, target_scan_timeout_seconds, each target's size, the status's "
             "reservation_id, the acknowledgements' sequence",
       expected="the assignment scanned and its bundle accepted at the first upload; the bundle's header names "
                "the reservation as a whole number; no failed step")
def _(ctx):
    run_accepted(ctx, "floats", dialect=("floats",))


@check("peer.assignment-texts", clauses=["SCAN-PEER-2", "SCAN-PEER-1"], level="MUST",
       title="whole numbers written as decimal strings (a generated client's int64) are read as int() reads them",
       fakes="one assignment; reservation_id, attempts, declared_bundle_bytes, target_scan_timeout_seconds and "
             "sequence written as strings of digits in every answer",
       expected="the assignment scanned and its bundle accepted at the first upload; its paths and bundle name "
                "the reservation as a number; no failed step")
def _(ctx):
    run_accepted(ctx, "numbers as text", dialect=("texts",))


@check("peer.instants", clauses=["SCAN-PEER-3", "SCAN-ASSIGN-3"], level="MUST",
       title="instants in another zone, without a zone or with a space are read as fromisoformat() reads them",
       fakes="one assignment per run, every instant of every answer rewritten: in -05:00 with microseconds; "
             "without a zone (UTC); with a space for its T; then one whose deadline passed %.0f s before its "
             "grant, served in -05:00" % -PAST_DEADLINE_S,
       expected="each rewritten run: scanned and accepted, no failed step; the past deadline: no runner, no "
                "upload or report, the past-deadline line")
def _(ctx):
    forms = [("another zone", "instant-offset"), ("no zone", "instant-naive"), ("a space for T", "instant-space")]
    each_variant(ctx, forms, lambda label, form: run_accepted(ctx, label, dialect=(form,)))
    # Arrange
    plane = ctx.plane(dialect=("instant-offset",))
    res = plane.add_assignment(assignment_deadline_in_s=PAST_DEADLINE_S)
    # Act
    life = plane.start(poll_s=PAST_DEADLINE_POLL_S)
    line = PAST_DEADLINE_LINE % res.reservation_id
    plane.wait_for(lambda: line in live_stdout(life) or res.puts or res.terminals, "the past-deadline line")
    plane.wait_calls("status", 2, reservation=res)
    plane.resolve(res, "expired")
    plane.wait_phase(0, None)
    plane.stop()
    # Assert
    ctx.expect(line in live_stdout(life) and not res.puts and not res.terminals and not runner_roots(plane),
               expected="a deadline in -05:00 that has passed: %r, no runner, no upload or report" % line,
               actual=lambda: "stdout %r; %d upload(s), %d report(s); roots %s" % (
                   live_stdout(life)[-3:], len(res.puts), len(res.terminals), runner_roots(plane)),
               diagnosis="read the deadline as fromisoformat() does: the same instant in any zone")


@check("peer.optional-members", clauses=["SCAN-PEER-2", "SCAN-ASSIGN-1"], level="MUST",
       title="members the upstream does without are optional: its fallbacks are taken",
       fakes="one assignment without deadlines.assignment_deadline_at (the upstream falls back to "
             "reservation.remote_expires_at), reservation.attempts, remote_issued_at, source and platform (given "
             "at the top level instead, as the upstream also reads them)",
       expected="the assignment scanned and its bundle accepted at the first upload; no report, no failed step")
def _(ctx):
    def patch(doc):
        reservation = doc["reservation"]
        doc["source"], doc["platform"] = reservation.pop("source"), reservation.pop("platform")
        for name in ("attempts", "remote_issued_at"):
            reservation.pop(name)
        doc["deadlines"].pop("assignment_deadline_at")
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment(patch=patch)
    # Act
    plane.start()
    plane.wait_resolved(res)
    result = plane.stop()
    # Assert
    expect_accepted(ctx, plane, res, stdout_lines(result), result, "optional members left out")


@check("peer.upload-201", clauses=["SCAN-PEER-4", "SCAN-UPLOAD-1"], level="MUST",
       title="an upload accepted with 201 Created is accepted like one answered 200",
       fakes="one assignment; the server answers every accepted upload 201 with its receipt",
       expected="the assignment resolved at the first upload; no second upload, no failed step")
def _(ctx):
    plane, res, _lines = run_accepted(ctx, "201", upload_status=201)
    ctx.expect(res.puts and res.puts[0].status == 201,
               expected="the upload answered 201", actual=lambda: describe_run(plane),
               diagnosis="PUT the bundle once and take a 201 Created with its receipt as accepted, like a 200")


@check("peer.receipt-expired", clauses=["SCAN-PEER-4", "SCAN-UPLOAD-4", "SCAN-TERMINAL-1"], level="MUST",
       title="a receipt that resolves the assignment as expired ends the upload or the report at once",
       fakes="one assignment; its upload answered 200 with the receipt of an expiry (resolution expired, the "
             "payload's digest, the reservation's identity) as the server expires it; then, on a fresh plane, an "
             "assignment this build cannot run, its terminal report answered the same way",
       expected="the line 'reservation <n> resolved (expired)', the slot file gone, no status read and no other "
                "mutation after that answer, no failed step")
def _(ctx):
    def act(label, verb):
        # Arrange
        plane = ctx.plane()
        res = plane.add_assignment(source="fixture" if verb == "bundle" else "nosuch")

        def expiry(call, status, doc):
            found = plane.server.resolve(res, "expired", payload_sha256=(
                call.body_sha256 if verb == "bundle" else None))
            if verb == "terminal":
                found = dict(found, failure_code=None)
            return 200, found
        plane.server.script(verb, 200, expiry, reservation=res)
        # Act
        life = plane.start()
        answered = plane.wait_calls(verb, 1, reservation=res)[0]
        line = "worker slot 0: reservation %d resolved (expired)" % res.reservation_id
        plane.wait_for(lambda: line in live_stdout(life) or failed_lines(live_stdout(life)), "the resolution line")
        plane.wait_phase(0, None)
        lines = live_stdout(life)
        plane.stop()
        # Assert
        after = [c for c in calls(plane, None, reservation=res) if c.t > answered.t and c.verb != "progress"]
        ctx.expect(line in lines and not failed_lines(lines) and not after,
                   expected="%s: %r at once, no failed step, no request for it after" % (label, line),
                   actual=lambda: "stdout %r; after the receipt: %s" % (
                       lines[-3:], ", ".join("%s %s" % (c.method, c.verb) for c in after) or "nothing"),
                   diagnosis="any resolution that binds what the slot holds ends the mutation, expired too, as "
                             "the upstream's _resolved() does")

    each_variant(ctx, [("upload", "bundle"), ("terminal report", "terminal")], act)


@check("peer.retry-after-forms", clauses=["SCAN-PEER-1", "SCAN-CLAIM-4"], level="MUST",
       title="a 204's Retry-After is read as the upstream's int() reads it: +1, 01 and ' 1 ' are one second",
       fakes="no work; every 204 carries Retry-After written one way per run: %s; error delay %.0f s"
             % (", ".join(repr(v) for _l, v in RETRY_AFTER_FORMS), LONG_ERROR_DELAY_S),
       expected="the next claim with a fresh request id, %d to %.1f s (plus the machine's slack) after the 204"
                % (RETRY_AFTER_S, RETRY_AFTER_S * 1.1))
def _(ctx):
    def act(label, value):
        # Arrange
        plane = ctx.plane(retry_after=value)
        # Act
        plane.start(error_delay_s=LONG_ERROR_DELAY_S)
        claims = plane.wait_claims(2, timeout=PHASE_TIMEOUT_S + LONG_ERROR_DELAY_S)
        plane.life.kill()
        # Assert
        ids = [c.request_id for c in claims[:2]]
        gap = wait_between(plane, claims[0], claims[1])
        low, high = RETRY_AFTER_S - CLOCK_EPSILON_S, RETRY_AFTER_S * 1.1 + SCHEDULE_SLACK_S
        ctx.expect(ids[0] != ids[1] and low <= gap <= high,
                   expected="Retry-After %r: a fresh request id %.2f..%.2f s after the 204" % (value, low, high),
                   actual="%s id, %.3f s after" % ("the same" if ids[0] == ids[1] else "a fresh", gap),
                   diagnosis="read Retry-After with int() as the upstream does (signs, leading zeros, spaces)")

    each_variant(ctx, RETRY_AFTER_FORMS, act)


@check("peer.progress-ack", clauses=["SCAN-PEER-1", "SCAN-PROGRESS-2"], level="MUST",
       title="a progress acknowledgement with floats, numbers as text and unknown members acknowledges its event",
       fakes="one assignment; every answer written with floats and unknown members (then, on a fresh plane, "
             "numbers as text and unknown members): the acknowledgements' reservation_id and sequence included",
       expected="every event with a reservation POSTed exactly once; the cursor at or past the last one")
def _(ctx):
    def act(label, dialect):
        # Arrange
        plane = ctx.plane(dialect=dialect)
        res = plane.add_assignment()
        # Act
        plane.start()
        plane.wait_resolved(res)
        plane.wait_for(lambda: plane.server.progress_events(), "a progress event")
        plane.stop()
        # Assert
        sent = [c.doc.get("sequence") for c in plane.server.calls("progress") if isinstance(c.doc, dict)]
        twice = sorted(set(n for n in sent if sent.count(n) > 1))
        cursor = plane.read_json("progress-cursor.json") or {}
        ctx.expect(sent and not twice and isinstance(cursor.get("sequence"), int) and cursor["sequence"] >= max(sent),
                   expected="%s: each event POSTed once, the cursor past the last (%s)" % (label, max(sent or [0])),
                   actual="sequences sent twice %s; cursor %r" % (twice[:5], cursor),
                   diagnosis="read the acknowledgement's numbers as int() does; ignore members nobody defined")

    each_variant(ctx, [("floats", ("floats", "members")), ("numbers as text", ("texts", "members"))], act)


@check("peer.error-body", clauses=["SCAN-PEER-1", "SCAN-HTTP-5", "SCAN-RECONCILE-7"], level="MUST",
       title="an error body with a float and members nobody defined still gives its code",
       fakes="one assignment; its first upload answered 409 with {error: {code: %s, message, retry_in_s: 1.5, "
             "zz_added_by_a_later_release}, zz_added_by_a_later_release}; the status says scanning; poll "
             "interval %.0f s" % (CONFLICT_CODE, STRIKE_POLL_S),
       expected="the first strike persisted as transport_conflict {status_code: 409, code: %s, attempts: 1}; the "
                "next upload accepted" % CONFLICT_CODE)
def _(ctx):
    from conformance import faults
    from conformance.planes.scan import canonical
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment()
    body = canonical({"error": {"code": CONFLICT_CODE, "message": "later (%s)" % plane.server.marker,
                                "retry_in_s": 1.5, "zz_added_by_a_later_release": {"n": 2.5}},
                      "zz_added_by_a_later_release": [1, 2.5, None]})
    plane.server.add_fault(faults.status(409, body=body), plane.server.bundle_match(res, first=1))
    seen = []

    def struck():
        state = plane.slot_state(0) or {}
        if "transport_conflict" in state:
            seen.append(state["transport_conflict"])
        return bool(seen) or res.resolution is not None
    # Act
    plane.start(poll_s=STRIKE_POLL_S)
    plane.wait_for(struck, "the first strike on disk")
    plane.wait_resolved(res, timeout=PHASE_TIMEOUT_S + STRIKE_POLL_S)
    plane.stop()
    # Assert
    wanted = {"status_code": 409, "code": CONFLICT_CODE, "attempts": 1}
    ctx.expect(seen and seen[0] == wanted,
               expected="slot-0.json's transport_conflict = %r" % wanted, actual="%r" % (seen[:1],),
               diagnosis="parse an error body as json.loads does (floats, unknown members) before taking its code")
    ctx.expect(res.resolution == "bundle_accepted", expected="the next upload accepted",
               actual=lambda: describe_run(plane),
               diagnosis="after a 409 answer, read the status and upload again: the next upload is accepted")


@check("peer.claim-resolution", clauses=["SCAN-PEER-1", "SCAN-CLAIM-5"], level="MUST",
       title="a 200 resolution with numbers as floats or text and unknown members ends the claim",
       fakes="slot-0.json claiming with a request id whose reservation the server resolved (expired); the 200 "
             "answer written with floats and unknown members, then (a fresh plane) numbers as text",
       expected="no status read, upload or report; the next claim with a fresh request id")
def _(ctx):
    def act(label, dialect):
        # Arrange
        plane = ctx.plane(dialect=dialect)
        res = plane.add_assignment(queued=False)
        request_id, _doc = plane.grant(res)
        plane.resolve(res, "expired")
        plane.write_slot(0, {"schema": 2, "phase": "claiming", "request_id": request_id})
        # Act
        plane.start()
        claims = plane.wait_claims(2)
        plane.life.kill()
        # Assert
        others = calls(plane, "status") + calls(plane, "bundle") + calls(plane, "terminal")
        ctx.expect(claims[0].status == 200 and claims[1].request_id not in (None, request_id) and not others,
                   expected="%s: the 200 ends the claim; the next claim with a fresh id, nothing else" % label,
                   actual=lambda: "first answered %s; next id %s; %s" % (
                       claims[0].status, "the same" if claims[1].request_id == request_id else "fresh",
                       describe_run(plane)),
                   diagnosis="read the resolution's reservation_id as int() does; ignore other members")

    each_variant(ctx, [("floats", ("floats", "members")), ("numbers as text", ("texts",))], act)


@check("peer.pretty-json", clauses=["SCAN-PEER-1"], level="MUST",
       title="answers indented, with keys in any order and non-ASCII text unescaped, are read alike",
       fakes="one assignment; every answer written with json.dumps(indent=2, ensure_ascii=False), keys unsorted",
       expected="the assignment scanned and its bundle accepted at the first upload; no failed step")
def _(ctx):
    run_accepted(ctx, "indented JSON", dialect=("pretty", "members"))


@check("peer.launch-line", clauses=["SCAN-PEER-5", "SCAN-ARGV-1", "SCAN-TOKEN-4"], level="MUST",
       title="the upstream's launch line, abbreviated and spelled as its argparse takes it, starts the worker",
       fakes="no work; the worker launched with only the upstream's options, one way per run: %s"
             % "; ".join(label for label, _ in LAUNCH_LINES),
       expected="the ready line for %d slots; a claim from each slot carrying the token; once running, "
                "/proc/<pid>/cmdline holds no piece of the token" % LAUNCH_SLOTS)
def _(ctx):
    def act(label, build):
        # Arrange
        plane = ctx.plane()
        argv = build(plane.server.origin, plane.token)
        # Act
        life = plane.start(argv=argv)
        plane.wait_ready(life, timeout=REEXEC_READY_S)
        claims = plane.wait_claims(LAUNCH_SLOTS)
        cmdline = read_cmdline(life.proc.host_pid)
        lines = live_stdout(life)
        plane.stop()
        # Assert
        ctx.expect("worker: started with %d slots" % LAUNCH_SLOTS in lines and all(c.auth == "ok" for c in claims)
                   and len(set(c.request_id for c in claims)) >= LAUNCH_SLOTS,
                   expected="%s: %d slots started, their claims carrying the token" % (label, LAUNCH_SLOTS),
                   actual=lambda: "stdout %r; %s" % (lines[:2], describe_run(plane)),
                   diagnosis="take every unambiguous prefix of --server, --token and --parallelism, and their "
                             "--opt=value forms, as the upstream's argparse does (D28)")
        pieces = [plane.token[i:i + 16] for i in range(len(plane.token) - 15)]
        ctx.expect(cmdline is not None and not any(p in "\0".join(cmdline) for p in pieces),
                   expected="%s: the running worker's cmdline holds no piece of the token" % label,
                   actual="cmdline %s" % ("unreadable" if cmdline is None else "holds it"),
                   diagnosis="write the abbreviations out before the token is moved off argv (SCAN-TOKEN-4)")

    each_variant(ctx, LAUNCH_LINES, act)
