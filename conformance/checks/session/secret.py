"""Secrets: each secret in its one place, nothing received repeated, no dump of the holder
(SESSION-SECRET-1..4).

The secrets are the identity token, the capability and the legacy lease nonce. The plane's
invariants already judge, after every run, where each secret went at every fake, and that no
secret sits in any argv, environment or scratch file of any process it sampled, nor on stdout
or stderr, and that no canary of a received body is repeated there or in an event. These
checks arrange the runs that give those invariants the most to see (a probe acquired,
downloaded and answered in a child; refusals whose detail carries a canary), and add what only
a dedicated run shows: who owns the capability process's /proc files once the node runs as an
ordinary user.
"""

import os
import signal

from conformance.checks import check
from conformance.checks._unprivileged import DROP_FAILED, UNPRIVILEGED_UID, open_traversable, proc_uids, \
    reachable_copy, unprivileged_node
from conformance.checks.session._common import (capability_pid, describe_run, expect_report, expect_summary,
                                                refusal)
from conformance.servers import CA_FILE

# How long the harness waits for the node to exit after its stop.
AFTER_STOP_TIMEOUT_S = 15.0


def _is_probe_child(seen):
    """A sampled process whose last argv ends with --probe-child (SESSION-ISOLATION-5)."""
    return bool(seen.argvs) and seen.argvs[-1][-1:] == ["--probe-child"]


@check("secret.places", clauses=["SESSION-SECRET-1", "SESSION-SECRET-2"], level="MUST",
       title="the identity token only on the exchange, the capability only on capability calls, neither at rest",
       fakes="a healthy plane; one probe acquired, downloaded and answered in a probe child; the session closes",
       expected="one identity token, minted for the origin and presented once, on the exchange; every capability "
                "call bearing the capability; nothing of either at the store, the metadata server, in any argv, "
                "environment, scratch file, stdout or stderr (the plane's invariants)")
def _(ctx):
    plane = ctx.plane()
    source = plane.add_source(rows=[["a", 1], ["b", 2]])
    probe_id = plane.probe("sample_rows", source)
    plane.start()
    plane.wait_report(probe_id)
    # The session stays open until the harness has sampled a probe child (the warm pool keeps
    # one waiting), so the invariants read a probe child's argv and environment on every run.
    watch = plane.runs[-1].watch
    plane.wait_for(lambda: any(_is_probe_child(s) for s in watch.processes()), "a probe child sampled")
    plane.close_session()
    plane.wait()
    expect_summary(ctx, plane, terminal_state="closed")
    expect_report(ctx, plane, probe_id, "succeeded")
    tokens = plane.metadata.tokens()
    ctx.expect(len(tokens) == 1 and tokens[0].audience == plane.control.exchange_audience
               and len(tokens[0].presented) == 1,
               expected="one identity token, for the audience, presented once",
               actual="%d token(s), presented %s" % (len(tokens), [len(t.presented) for t in tokens]),
               diagnosis="the token is minted once and used for the one exchange it was minted for")
    exchanges = plane.control.calls("exchange")
    ctx.expect(len(exchanges) == 1 and exchanges[0].bearer == "identity",
               expected="the exchange bears the identity token", actual=describe_run(plane),
               diagnosis="present the identity token on the exchange, once, and on nothing else")
    callbacks = [c for c in plane.control.calls() if c.verb not in ("exchange", "lease")]
    ctx.expect(callbacks and all(c.bearer == "capability" for c in callbacks),
               expected="every callback bears the capability",
               actual=lambda: ", ".join("%s: %s" % (c.verb, c.bearer) for c in callbacks if c.bearer != "capability"),
               diagnosis="present the capability, and only it, on every callback after the exchange: never the "
                         "identity token")
    seen = watch.processes()
    ctx.expect(any(_is_probe_child(s) for s in seen) and len(seen) >= 3,
               expected="the harness sampled the monitor, the capability process and a probe child (arrangement)",
               actual="%d process(es) sampled" % len(seen),
               diagnosis="run the session as a monitor, a capability process and sandboxed probe children "
                         "(SESSION-ISOLATION-1, -5): the harness sampled fewer processes")


@check("secret.not-repeated", clauses=["SESSION-SECRET-3"], level="MUST",
       title="refusal details are never repeated on stdout, stderr or in an event",
       fakes="every refusal's detail carries a canary: the first claim is refused 503, the probe's report 409 "
             "ATTEMPT_STALE, which ends the session",
       expected="the summary failure_code ATTEMPT_STALE, exit 1; the canary nowhere on stdout, stderr or in an event")
def _(ctx):
    plane = ctx.plane()
    canary = plane.control.detail_canary
    source = plane.add_source(rows=[["a", 1]])
    probe_id = plane.probe("source_inspect", source)
    plane.control.add_fault(refusal(503, "CONTROL_PLANE_BUSY", detail="busy (%s)" % canary),
                            plane.control.claim_match(first=1))
    plane.control.add_fault(refusal(409, "ATTEMPT_STALE", detail="stale (%s)" % canary), plane.control.report_match())
    plane.run()
    expect_summary(ctx, plane, failure_code="ATTEMPT_STALE")
    ctx.expect(bool(plane.control.reports(probe_id)), expected="the report was refused", actual=describe_run(plane),
               diagnosis="report every probe the node claimed, even one whose answer the control "
                         "plane then refuses: that refusal is what ends this session")
    places = [name for name, text in (("stdout", plane.result.stdout), ("stderr", plane.result.stderr))
              if canary in text]
    places += ["event %s" % e.event_type for e in plane.control.progress_events() if canary in str(e.doc)]
    ctx.expect(not places, expected="no refusal detail repeated", actual="the detail's canary in %s" % ", ".join(
        places), diagnosis="only a code and an HTTP status may be repeated of what the node receives")


@check("secret.dumpable", clauses=["SESSION-SECRET-4"], level="MUST",
       title="the capability process is not dumpable while it holds the lease",
       fakes="the node runs as uid 65534 (dropped by a small launcher before exec); no probe; the harness reads "
             "the capability process's /proc after the second claim",
       expected="/proc/<capability process>/environ owned by root (a dumpable process's files are owned by its "
                "own uid); then SIGTERM ends the session service_stopped")
def _(ctx):
    plane = ctx.plane()
    plane.ca_file = reachable_copy(ctx, CA_FILE)
    unprivileged = unprivileged_node(ctx, files=(plane.ca_file,))
    scratch = ctx.tmpdir("unprivileged-tmp")
    open_traversable(scratch, ctx.tmp)
    original, ctx.node = ctx.node, unprivileged
    try:
        plane.start(env={"TMPDIR": scratch})
    finally:
        ctx.node = original
    plane.wait_for(lambda: len(plane.control.claims()) >= 2 or DROP_FAILED in plane.proc.stderr_text(),
                   "the second claim")
    if DROP_FAILED in plane.proc.stderr_text():
        raise RuntimeError("the harness could not start the node as uid %d: %s" % (
            UNPRIVILEGED_UID, plane.proc.stderr_text().strip()[:300]))
    pid = capability_pid(ctx, plane)
    real, effective = proc_uids(pid)
    owners = dict((name, os.stat("/proc/%d/%s" % (pid, name)).st_uid) for name in ("environ", "mem"))
    plane.signal(signal.SIGTERM)
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    if effective != UNPRIVILEGED_UID:
        raise RuntimeError("arrangement: the capability process runs as uid %d/%d, not %d" % (
            real, effective, UNPRIVILEGED_UID))
    ctx.note("capability process uid %d; its /proc files owned by %s" % (effective, owners))
    ctx.expect(owners == {"environ": 0, "mem": 0},
               expected="/proc/<pid>/environ and mem owned by root (the capability process is not dumpable)",
               actual="owned by %s: it is dumpable, so any process of uid %d can read its memory" % (
                   owners, UNPRIVILEGED_UID),
               diagnosis="call prctl(PR_SET_DUMPABLE, 0) in the capability process before it asks for any token")
    expect_summary(ctx, plane, terminal_state="service_stopped")
