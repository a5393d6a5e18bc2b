"""Assignments: their shape, what this build can run, their deadline, and their target URLs
(SCAN-ASSIGN-1 to SCAN-ASSIGN-4).

An assignment is the server's order to scan some targets. One this build cannot run (a member
out of shape, a source, platform or planning kind it has no capability for) must be reported at
once, so the server can release the reservation, instead of failing on every step until it
expires. One already past its deadline must not be scanned at all: the server will expire it,
and a report after the deadline would only be refused. And each target's pre-signed URL is a
credential of its own: it lives in the slot state and the runner's input, private files, and
nowhere else.
"""

import os
import urllib.parse

from conformance.checks import check
from conformance.checks.scan._common import (CLOCK_EPSILON_S, PHASE_TIMEOUT_S, SCHEDULE_SLACK_S, calls,
                                             describe_run, each_variant, runner_roots, wait_between)
from conformance.lifecycle import when
from conformance.planes.scan import DELETE

# SCAN-ASSIGN-2: the diagnostic code's prefix; the member follows it.
CONTRACT_INVALID = "worker_contract_invalid."
# The poll interval of the past-deadline check, and how many status reads it watches.
POLL_S = 0.3
POLLS = 4
# SCAN-OUTPUT-1: the line a past-deadline assignment prints, once (D5).
PAST_DEADLINE_LINE = "worker slot 0: reservation %d is past its deadline; waiting for the server"
# How far in the past the past-deadline assignment's deadline is, from its grant.
PAST_DEADLINE_S = -5.0


def _target(change):
    """A patch changing the first target's members."""
    def patch(doc):
        doc["targets"][0].update(change)
    return patch


# (label: the member that fails first, in the order of SCAN-ASSIGN-1; add_assignment keywords)
INCOMPATIBLE = [
    ("reservation.source", {"patch": {"reservation": {"source": ""}}}),
    ("reservation.platform", {"patch": {"reservation": {"platform": "p" * 65}}}),
    ("reservation.declared_bundle_bytes", {"patch": {"reservation": {"declared_bundle_bytes": 0}}}),
    ("deadlines.assignment_deadline_at", {"patch": {"deadlines": {"assignment_deadline_at": "soon"}}}),
    ("deadlines.target_scan_timeout_seconds", {"patch": {"deadlines": {"target_scan_timeout_seconds": 0.5}}}),
    ("execution_snapshot_sha256", {"patch": {"execution_snapshot_sha256": "A" * 64}}),
    ("planning_kind", {"patch": {"planning_kind": ""}}),
    ("targets", {"patch": {"targets": []}}),
    ("targets.name", {"patch": _target({"name": ".hidden"})}),
    ("targets.size", {"patch": _target({"size": -1})}),
    ("targets.size", {"patch": _target({"size": 1.5})}),
    ("targets.sha256", {"patch": _target({"sha256": "Z" * 64})}),
    ("targets.url", {"patch": _target({"url": "http://127.0.0.1:9/plain-http"})}),
    ("capability", {"planning_kind": "no_such_planning_kind"}),
]


def _names_member(code, member):
    """SCAN-ASSIGN-2: the code names the member: its path (reservation.source) or its own name
    (source). The contract does not spell the capability's member: any name is taken there."""
    if not isinstance(code, str) or not code.startswith(CONTRACT_INVALID):
        return False
    named = code[len(CONTRACT_INVALID):]
    if member == "capability":
        return bool(named)
    return named in (member, member.split(".")[-1])


@check("assign.incompatible", clauses=["SCAN-ASSIGN-2", "SCAN-ASSIGN-1"], level="MUST",
       title="an assignment out of shape or without a capability is reported once, naming the member, not run",
       fakes="%d reservations queued, each with one member of SCAN-ASSIGN-1 broken (%s), or a planning kind the "
             "worker has no capability for" % (len(INCOMPATIBLE), ", ".join(label for label, _ in INCOMPATIBLE)),
       expected="for each: one terminal report client_process_failed whose last diagnostic's code is "
                "worker_contract_invalid.<that member>; no upload, no runner, no target fetched")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    made = [(label, plane.add_assignment(**options)) for label, options in INCOMPATIBLE]
    # Act
    plane.start()
    for _label, res in made:
        plane.wait_resolved(res)
    # Assert
    wrong = []
    for label, res in made:
        reports = res.terminals
        doc = reports[0].doc if len(reports) == 1 and isinstance(reports[0].doc, dict) else {}
        diagnostics = doc.get("diagnostics") if isinstance(doc.get("diagnostics"), list) else []
        last = diagnostics[-1] if diagnostics and isinstance(diagnostics[-1], dict) else {}
        if len(reports) != 1 or doc.get("failure_code") != "client_process_failed" \
                or not _names_member(last.get("code"), label) or res.puts:
            wrong.append("%s: %d report(s), failure_code %r, last diagnostic code %r, %d upload(s)" % (
                label, len(reports), doc.get("failure_code"), last.get("code"), len(res.puts)))
    ctx.expect(not wrong,
               expected="each reservation: one report client_process_failed, its last diagnostic coded "
                        "worker_contract_invalid.<the broken member>, no upload",
               actual=lambda: "; ".join(wrong[:4]),
               diagnosis="an assignment this build cannot run is reported at once, naming the first member that "
                         "failed in the order of SCAN-ASSIGN-1 (D5), so the server can release it")
    fetched = [ex for ex in plane.store.transcript if ex.method == "GET"]
    ctx.expect(not fetched and not runner_roots(plane),
               expected="no target fetched and no runner root made",
               actual=lambda: "%d target GET(s); roots %s" % (len(fetched), runner_roots(plane)),
               diagnosis="the assignment is checked before any runner starts (SCAN-ASSIGN-2)")


@check("assign.past-deadline", clauses=["SCAN-ASSIGN-3", "SCAN-BACKOFF-4"], level="MUST",
       title="an assignment already past its deadline is not run: the status is polled until the server resolves it",
       fakes="one reservation whose assignment deadline is %.0f s before its grant, told by the status's expires_at "
             "(then, on a fresh plane, by reservation.remote_expires_at, the status leaving expires_at out); poll "
             "interval %.1f s; resolved expired after %d status reads" % (-PAST_DEADLINE_S, POLL_S, POLLS),
       expected="no runner, no target fetched, no upload or report; status reads one poll interval apart; the "
                "past-deadline line printed once; after the resolution the slot file is gone")
def _(ctx):
    def act(label, without_expires_at):
        # Arrange
        plane = ctx.plane()
        res = plane.add_assignment(assignment_deadline_in_s=PAST_DEADLINE_S)
        if without_expires_at:
            plane.set_status(res, expires_at=DELETE)
        # Act
        life = plane.start(poll_s=POLL_S)
        reads = plane.wait_calls("status", POLLS, timeout=PHASE_TIMEOUT_S + POLLS * POLL_S)
        fetched = [ex for ex in plane.store.transcript if ex.method == "GET"]
        roots = runner_roots(plane)
        mutations = calls(plane, "bundle") + calls(plane, "terminal")
        plane.resolve(res, "expired")
        plane.wait_phase(0, None)
        # Assert
        ctx.expect(not fetched and not roots and not mutations,
                   expected="no runner, no target fetched, no upload or report for the past-deadline assignment",
                   actual=lambda: "roots %s; %s" % (roots, describe_run(plane)),
                   diagnosis="an assignment at or past its deadline starts no runner and sends no mutation: the "
                             "server expires it (D5)")
        gaps = [wait_between(plane, reads[i], reads[i + 1]) for i in range(POLLS - 1)]
        ctx.expect(all(POLL_S - CLOCK_EPSILON_S <= g <= POLL_S + SCHEDULE_SLACK_S for g in gaps),
                   expected="status reads %.1f..%.1f s apart" % (POLL_S, POLL_S + SCHEDULE_SLACK_S),
                   actual="gaps %s" % ", ".join("%.3f" % g for g in gaps),
                   diagnosis="a past-deadline step did nothing: it waits the poll interval (SCAN-BACKOFF-4)")
        line = PAST_DEADLINE_LINE % res.reservation_id
        said = [text for _t, text in life.proc.stdout_lines if text == line]
        ctx.expect(len(said) == 1,
                   expected="the line %r once" % line,
                   actual="%d time(s) (stdout: %r)" % (len(said), life.proc.stdout_text()[-300:]),
                   diagnosis="a past-deadline assignment prints one safe line, then polls quietly")
        plane.life.kill()
    each_variant(ctx, [("expires_at in the past", False),
                       ("no expires_at; reservation.remote_expires_at in the past", True)], act)


def _signature(url):
    """The pre-signed URL's signature: the part of it that is the credential."""
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    return query["X-Amz-Signature"][0]


def _holding(roots, needle):
    """Relative paths of the files under roots whose bytes hold needle."""
    found = []
    for label, root in roots:
        for folder, _dirs, files in os.walk(root):
            for name in files:
                path = os.path.join(folder, name)
                try:
                    with open(path, "rb") as handle:
                        if needle in handle.read():
                            found.append("%s/%s" % (label, os.path.relpath(path, root)))
                except OSError:
                    continue
    return sorted(found)


def _allowed(place):
    """SCAN-ASSIGN-4: the slot state and the runner's input file, or the temporary file of an atomic
    write of either that a crash interrupted (a dot-name in the same directory, SCAN-STATE-2)."""
    name = place.rsplit("/", 1)[-1]
    base = name.lstrip(".") if name.startswith(".") else name
    exact = base == name
    slot_state = (place.startswith("state/") and place.count("/") == 1 and base.startswith("slot-")
                  and "-stale" not in base and (base.endswith(".json") if exact else ".json" in base))
    return slot_state or (name == "input.json" if exact else base.startswith("input.json"))


@check("assign.url-private", clauses=["SCAN-ASSIGN-4"], level="MUST",
       title="a target's pre-signed URL is kept only in the slot state and the runner's input file",
       fakes="one assignment; the worker SIGKILLed while its runner fetches the target, restarted, and run to the "
             "accepted bundle",
       expected="at the crash and at the end, the URL's signature is in no file of the state, bundle and work trees "
                "but slot-<id>.json and a runner's input.json; at the crash, in slot-0.json")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    target = plane.add_target("notes.txt", b"alpha = 1\nbeta = 2\n")
    res = plane.add_assignment(targets=[target])
    needle = _signature(target["url"]).encode("ascii")
    trees = [("state", plane.state_dir), ("bundles", plane.bundle_dir), ("work", plane.work_dir)]
    # Act
    fetching = when(lambda: any(ex.method == "GET" for ex in plane.store.transcript), "the target is fetched")
    first = plane.start(kill_at=fetching)
    first.wait(PHASE_TIMEOUT_S)
    at_crash = _holding(trees, needle)
    plane.restart()
    plane.wait_resolved(res)
    plane.stop()
    at_end = _holding(trees, needle)
    # Assert
    ctx.expect(first.fired and "state/slot-0.json" in at_crash,
               expected="the worker SIGKILLed while the target was fetched, slot-0.json holding the assignment",
               actual=lambda: "fired %s; files holding the signature: %s" % (first.fired, at_crash),
               diagnosis="the run never reached the moment this check needs")
    stray = [p for p in at_crash + at_end if not _allowed(p)]
    ctx.expect(not stray,
               expected="the URL only in slot-<id>.json and input.json",
               actual="also in %s" % ", ".join(sorted(set(stray))),
               diagnosis="a pre-signed URL is a credential: keep it out of journals, bundles, owner and event files")
