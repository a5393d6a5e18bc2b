"""Secrets: not dumpable before any secret exists, and each secret only in its one place
(CRAWLER-SECRET-1, CRAWLER-SECRET-2).

The secrets are the identity tokens, the signed upload URL (its signature
above all) and the raw bootstrap response. The plane's invariants already scan
stdout, stderr, the node's and its descendants' argv, the node's environment
at start, the child's argv, environment and input header, source requests,
:fail bodies and stored objects after every run; these checks add what only a
dedicated run can see: who owns the node's /proc files once it runs as an
ordinary user, the Authorization header of each broker call, the headers of
every other request, and the node's environment and argv mid-run, once the
secrets exist.
"""

import os
import signal
import time

from conformance.checks import check
from conformance.checks._unprivileged import (DROP_FAILED, UNPRIVILEGED_UID, open_traversable, proc_uids,
                                             reachable_copy, unprivileged_node)
from conformance.checks.crawler._common import describe_run, expect_outcome, expect_success, faults, wait_for
from conformance.planes import crawler_child
from conformance.planes.crawler import CA_FILE
from conformance.servers import MASK

# Time given to the node to block in the identity request before the
# harness reads its /proc files.
SETTLE_S = 0.2
# How long the harness waits for the node to exit after its SIGTERM.
AFTER_STOP_TIMEOUT_S = 20.0
# secret.confinement: the scripted child waits this long before answering,
# while the harness reads the node's environment and argv (the token has been
# used and the signed URL is held by then).
CHILD_PAUSE_S = 1.0


@check("secret.dumpable", clauses=["CRAWLER-SECRET-1"], level="MUST",
       title="the node is not dumpable by the time it asks for its first secret",
       fakes="the node runs as uid 65534 (dropped by a small launcher before exec); the metadata server "
             "holds the identity request",
       expected="while the identity request is pending, /proc/<pid>/environ is owned by root (a dumpable "
                "process's files are owned by its own uid); then SIGTERM ends it CANCELLED")
def _(ctx):
    plane = ctx.plane()
    plane.ca_file = reachable_copy(ctx, CA_FILE)
    unprivileged = unprivileged_node(ctx, files=(plane.ca_file,))
    plane.metadata.add_fault(faults.hang(), plane.metadata.identity_match())
    open_traversable(plane.scratch, ctx.tmp)
    original, ctx.node = ctx.node, unprivileged
    try:
        plane.start()
    finally:
        ctx.node = original
    wait_for(ctx, plane, lambda: plane.metadata.started()() or not plane.proc.running(), "the identity request")
    if not plane.metadata.started()() and DROP_FAILED in plane.proc.stderr_text():
        raise RuntimeError("the harness could not start the node as uid %d: %s" % (
            UNPRIVILEGED_UID, plane.proc.stderr_text().strip()[:300]))
    wait_for(ctx, plane, plane.metadata.started(), "the identity request")
    time.sleep(SETTLE_S)
    pid = plane.proc.host_pid
    real, effective = proc_uids(pid)
    owner = os.stat("/proc/%d/environ" % pid).st_uid
    plane.signal(signal.SIGTERM)
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    if (real, effective) != (UNPRIVILEGED_UID, UNPRIVILEGED_UID):
        raise RuntimeError("arrangement: the node runs as uid %d/%d, not %d" % (real, effective, UNPRIVILEGED_UID))
    ctx.note("node uid %d; /proc/<pid>/environ owned by uid %d during the identity request" % (effective, owner))
    ctx.expect(owner == 0, expected="/proc/<pid>/environ owned by root (the node is not dumpable)",
               actual="owned by uid %d, the node's own: it is still dumpable" % owner,
               diagnosis="call prctl(PR_SET_DUMPABLE, 0) right after the bucket check, before any secret")
    expect_outcome(ctx, plane, "CRAWLER_CANCELLED", "failed", 143)


def _secret_in(plane, text):
    """The description of the first secret found in text, or None."""
    if not text:
        return None
    for secret in sorted(plane.secrets(), key=len, reverse=True):
        if secret in text:
            return plane.describe_secret(secret)
    return None


def _read_proc(pid, name):
    try:
        with open("/proc/%d/%s" % (pid, name), "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return None


def _expect_tokens_in_place(ctx, plane, routes, run):
    """One token per broker call, minted for its route, presented once, in its Authorization only;
    no secret in any other header, path or query of a control-plane request."""
    tokens = plane.metadata.tokens()
    ctx.expect([t.audience for t in tokens] == [plane.broker.audience(r) for r in routes],
               expected="%s: tokens minted for %s, in that order" % (run, ", ".join(routes)),
               actual="audiences %s" % [t.audience for t in tokens],
               diagnosis="mint one token per broker call, for that call's own audience, just before it")
    for token, route in zip(tokens, routes):
        ctx.expect([kind for kind, _seq in token.presented] == [route],
                   expected="%s: token #%d presented once, on :%s" % (run, token.seq, route),
                   actual="presented on %s" % ([kind for kind, _seq in token.presented] or "nothing"),
                   diagnosis="a token is used only for the broker call it was minted for")
    by_seq = dict((t.seq, t) for t in tokens)
    for call in plane.broker.redeems() + plane.broker.fails():
        token = by_seq.get(call.token_seq)
        ctx.expect(token is not None and call.header_all("authorization") == ["Bearer " + token.token],
                   expected="%s: exactly one Authorization on :%s, 'Bearer ' and a token minted here" % (
                       run, call.kind),
                   actual="%d Authorization header(s), token %s" % (len(call.header_all("authorization")),
                                                                   call.token_seq),
                   diagnosis="put the token in exactly one Authorization header, 'Bearer ' and the token minted for "
                             "this call")
        for name in call.header_names:
            if name.lower() == "authorization":
                continue
            for value in call.header_all(name):
                leak = _secret_in(plane, value)
                ctx.expect(leak is None, expected="%s: no secret in :%s's %s header" % (run, call.kind, name),
                           actual="%s there" % leak,
                           diagnosis="a secret goes in the Authorization header only: never in another header of a "
                                     "broker call")
        leak = _secret_in(plane, call.raw_path)
        ctx.expect(leak is None, expected="%s: no secret in :%s's path" % (run, call.kind),
                   actual="%s there" % leak,
                   diagnosis="never put a secret in a broker call's path")
    for index, request in enumerate(plane.metadata.requests()):
        leak = _secret_in(plane, request.raw_query)
        ctx.expect(not request.authorization and leak is None,
                   expected="%s: identity request #%d without Authorization or secret" % (run, index + 1),
                   actual="Authorization sent" if request.authorization else "%s in its query" % leak,
                   diagnosis="the identity request carries no Authorization and no secret in its query: only the "
                             "audience and format=full")
    for ex in plane.metadata.transcript:
        # The transcript masks every secret (and an Authorization header whole).
        masked = [name for name, value in ex.headers if MASK in value]
        ctx.expect(not masked, expected="%s: no secret in a metadata request's headers" % run,
                   actual="a secret in %s" % ", ".join(masked),
                   diagnosis="a metadata request carries no secret in any header: it needs only Metadata-Flavor")


@check("secret.confinement", clauses=["CRAWLER-SECRET-2"], level="MUST",
       title="each token only in its own broker call's Authorization; the signed query only in PUT request lines",
       fakes="a healthy run (the scripted child pauses 1 s while the harness reads the node's /proc "
             "environ and cmdline); a run whose :redeem answers 500, so a second token goes to :fail",
       expected="each token minted for its route and presented once, as 'Bearer <it>' of that call; no "
                "secret in any other header, path or query; every store request a PUT with no secret in "
                "its headers; no secret in the node's environment or argv mid-run")
def _(ctx):
    plane = ctx.plane(child=dict(crawler_child.reference_behaviour(), sleep_before=CHILD_PAUSE_S))
    plane.start()
    wait_for(ctx, plane, plane.child.started(), "the running child")
    pid = plane.proc.host_pid
    environ, cmdline = _read_proc(pid, "environ"), _read_proc(pid, "cmdline")
    plane.wait()
    expect_success(ctx, plane)
    for where, text in (("environment", environ), ("argv", cmdline)):
        if text is None:
            ctx.note("the node's /proc %s was not readable mid-run (not dumpable, and the harness is not "
                     "root): not checked" % where)
            continue
        leak = _secret_in(plane, text.replace("\0", "\n"))
        ctx.expect(leak is None, expected="no secret in the node's %s mid-run (/proc/<pid>)" % where,
                   actual="%s there" % leak,
                   diagnosis="a secret never goes into os.environ, argv or a process title")
    _expect_tokens_in_place(ctx, plane, ["redeem"], "healthy run")
    for ex in plane.store.transcript:
        masked = [name for name, value in ex.headers if MASK in value]
        ctx.expect(ex.method == "PUT" and not masked,
                   expected="every store request a PUT with the signed query in its request line only",
                   actual="%s with a secret in %s" % (ex.method, ", ".join(masked) or "-"),
                   diagnosis="send the store only the PUT, with the signed query in its request line and never in a "
                             "header")

    failing = ctx.plane(redeem_status=500)
    failing.run()
    expect_outcome(ctx, failing, "CRAWLER_BOOTSTRAP_REDEMPTION_FAILED", "failed", 1)
    ctx.expect(len(failing.broker.fails()) == 1, expected="one :fail", actual=describe_run(failing),
               diagnosis=":redeem answered 500 is CRAWLER_BOOTSTRAP_REDEMPTION_FAILED, reported on :fail exactly once")
    _expect_tokens_in_place(ctx, failing, ["redeem", "fail"], ":fail run")
