"""Cancellation: a stop (SIGTERM or SIGINT) in every phase, as PID 1 (CRAWLER-STOP-*).

Every check here runs the node as the init of a PID namespace, as in a
container: there the kernel drops a signal the node has no handler for, so a
node that relies on the default action never stops (CRAWLER-STOP-1). Checks
SKIP where PID namespaces are unavailable (or with --no-pid1).

What these checks pin: before the capability, a stop ends the run within
STOP_BUDGET_S with CANCELLED "failed" and exit 143, no :fail; after it, the
blocked fetch, connect or child ends at once and a CANCELLED bundle is PUT,
exit 143 either way; during a PUT, a body still going out is aborted (then a
bundle), a body fully sent waits for its answer up to CANCEL_GRACE_S; a second
stop ends the run at once.
"""

import signal
import time

from conformance.checks import check
from conformance.checks.crawler._common import (
    CANCELLED, STOP_BUDGET_S, Match, PutRecorder, bulky_csv, bulky_limits, describe_run, docs, each_variant,
    expect_outcome, expect_put_count, expect_reported, expect_success, faults, puts_summary, stop_unnoticed)
from conformance.planes import crawler_child
from conformance.planes.crawler import loopback_addresses
from conformance.runner import proc_alive
from conformance.timeouts import POLL_INTERVAL_S, SHORT_TIMEOUT_S, Deadline

# How long the harness waits for a node to exit after a stop before it kills
# it: past CANCEL_GRACE_S (8 s), so a node that runs out its grace is still
# measured rather than killed.
AFTER_STOP_TIMEOUT_S = 20.0
# Time given to the node to block in the phase under test once the fakes have
# seen it get there.
SETTLE_S = 0.2
# A source that dribbles one byte this often: the fetch is alive (no
# deadline fires) but never ends by itself.
DRIBBLE_INTERVAL_S = 0.2
# stop.fetch: the source sends this much of its body, then nothing.
STALLED_SOURCE_BYTES = 1024
# stop.put-answer: the store holds its answer to a fully sent PUT this long,
# well inside CANCEL_GRACE_S.
ANSWER_DELAY_S = 2.0
# stop.put-body: the store stops reading the result PUT's body after this
# many bytes; the result (about 7 MB, from a 5 MB source) is far larger than
# what loopback socket buffers absorb, so the node is left mid-body.
STALL_AFTER_BYTES = 64 * 1024
PUT_BODY_SOURCE_BYTES = 5 * 1000 * 1000
# Bytes the store may have read past the stall point (request head, a TLS
# record read ahead) when the harness adds up what the node has sent.
READ_AHEAD_ALLOWANCE_BYTES = 64 * 1024
# How long the bytes in flight must stay unchanged for the node to count as
# blocked in its PUT body.
STABLE_S = 0.3
# TCP state SYN_SENT in /proc/net/tcp: a connect that has not completed.
TCP_SYN_SENT = "02"


def _start(ctx, plane):
    """Start the node as PID 1 (SKIP when that is not available here)."""
    ctx.require_pid1()
    proc = plane.start(pid1="require")
    ctx.expect(proc.is_pid1, expected="the node runs as PID 1", actual="it does not (harness)",
               diagnosis="the harness could not run the node as PID 1 here, which is not the node's fault: "
                         "rerun where PID namespaces are allowed")
    return proc


def _expect_prompt(ctx, plane, budget_s=STOP_BUDGET_S, what="the stop"):
    latency = plane.result.stop_latency_s
    ctx.expect(latency is not None and latency <= budget_s,
               expected="exit within %.1f s of %s" % (budget_s, what),
               actual="%s (%s)" % ("%.2f s" % latency if latency is not None else "no signal recorded",
                                   describe_run(plane)),
               diagnosis=lambda: stop_unnoticed(plane) or "a blocked call must end when the stop arrives: shut the "
                                                          "socket down, kill the child's group, wake every wait")


def _expect_cancelled_before_capability(ctx, plane):
    expect_outcome(ctx, plane, CANCELLED, "failed", 143)
    ctx.expect(not plane.broker.fails(), expected="no :fail after a stop",
               actual="%d :fail POST(s)" % len(plane.broker.fails()),
               diagnosis="CRAWLER-STOP-2: a stop before the capability is reported on stderr only")
    ctx.expect(not plane.puts(), expected="no PUT", actual=puts_summary(plane),
               diagnosis="before the capability validated there is nothing to PUT: a stop then ends the run with the "
                         "status line alone")


def _expect_cancelled_bundle(ctx, plane):
    """CANCELLED bundle stored, "reported", 143; one PUT, the bundle's."""
    expect_reported(ctx, plane, CANCELLED, exit_code=143)
    expect_put_count(ctx, plane, 1, "the cancelled bundle, no result")


def _tcp_rows():
    """(local port, remote port, state, tx_queue, rx_queue) of every TCP socket in this network namespace."""
    rows = []
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(path) as handle:
                lines = handle.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 5:
                continue
            tx, _, rx = fields[4].partition(":")
            rows.append((int(fields[1].rsplit(":", 1)[1], 16), int(fields[2].rsplit(":", 1)[1], 16),
                         fields[3], int(tx, 16), int(rx, 16)))
    return rows


def _connecting_to(port):
    """A socket is in SYN_SENT towards port (the node's connect is pending)."""
    return lambda: any(remote == port and state == TCP_SYN_SENT for _l, remote, state, _t, _r in _tcp_rows())


def _bytes_in_flight(port):
    """Bytes sent to the server on port and not yet read by it: the client
    sockets' send queues plus the server sockets' receive queues."""
    total = 0
    for local, remote, _state, tx, rx in _tcp_rows():
        if remote == port:
            total += tx
        elif local == port:
            total += rx
    return total


@check("stop.identity", clauses=["CRAWLER-STOP-1", "CRAWLER-STOP-2"], level="MUST",
       title="as PID 1, SIGTERM while the metadata server holds the token ends the run at once",
       fakes="the node is PID 1; the metadata server accepts the identity request and never answers",
       expected="exit 143 within 1 s; {\"code\":\"CRAWLER_CANCELLED\",\"status\":\"failed\"}; no :redeem, "
                "no :fail, no PUT")
def _(ctx):
    plane = ctx.plane()
    plane.metadata.add_fault(faults.hang(), plane.metadata.identity_match())
    _start(ctx, plane)
    plane.stop_when(plane.metadata.started(), what="the identity request", settle_s=SETTLE_S)
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    _expect_prompt(ctx, plane)
    _expect_cancelled_before_capability(ctx, plane)
    redeems = plane.broker.redeems()
    ctx.expect(not redeems, expected="no :redeem after the stop", actual="%d" % len(redeems),
               diagnosis=lambda: stop_unnoticed(plane) or "look at the stop before each request: after a stop "
                                                          "the node starts nothing new")


@check("stop.redeem", clauses=["CRAWLER-STOP-2", "CRAWLER-STOP-1"], level="MUST",
       title="SIGTERM while :redeem is unanswered: CANCELLED failed, no :fail, no retry",
       fakes="the node is PID 1; the broker accepts :redeem and never answers",
       expected="exit 143 within 1 s; CANCELLED failed; exactly one :redeem; no :fail")
def _(ctx):
    plane = ctx.plane()
    plane.broker.add_fault(faults.hang(), plane.broker.redeem_match())
    _start(ctx, plane)
    plane.stop_when(plane.broker.redeem_started(), what="the :redeem answer", settle_s=SETTLE_S)
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    _expect_prompt(ctx, plane)
    _expect_cancelled_before_capability(ctx, plane)
    redeems = plane.broker.redeems()
    ctx.expect(len(redeems) == 1, expected="exactly one :redeem", actual="%d" % len(redeems),
               diagnosis=lambda: stop_unnoticed(plane) or "a stop ends the :redeem in flight and is not followed "
                                                          "by a retry")


@check("stop.fetch", clauses=["CRAWLER-STOP-1", "CRAWLER-STOP-3"], level="MUST",
       title="SIGTERM mid-fetch ends the fetch at once and stores a cancelled bundle",
       fakes="the node is PID 1; the source dribbles its answer one byte every 0.2 s / sends 1 KiB of its "
             "body and then nothing (a read blocked on a silent connection)",
       expected="exit 143 within 1 s; CANCELLED bundle stored, status \"reported\"; one PUT")
def _(ctx):
    variants = [("dribbled answer", faults.dribble(chunk_bytes=1, interval_s=DRIBBLE_INTERVAL_S)),
                ("stalled body", faults.stall(after_bytes=STALLED_SOURCE_BYTES))]

    def act(label, fault):
        plane = ctx.plane(source=bulky_csv(2 * STALLED_SOURCE_BYTES))
        plane.site.add_fault(fault, plane.site.source_match())
        _start(ctx, plane)
        plane.stop_when(plane.site.started(), what="the source's answer (%s)" % label, settle_s=SETTLE_S)
        plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
        _expect_prompt(ctx, plane, what="the stop (variant %s; the fakes answer the bundle PUT at once)" % label)
        expect_reported(ctx, plane, CANCELLED, variant=label, exit_code=143)
        expect_put_count(ctx, plane, 1, "the cancelled bundle, no result (variant %s)" % label)
    each_variant(ctx, variants, act)


@check("stop.fetch-connect", clauses=["CRAWLER-STOP-1", "CRAWLER-STOP-3"], level="MUST",
       title="SIGTERM during a connect to the source that never completes ends it at once",
       fakes="the node is PID 1; the source URL's port accepts no connection (its SYNs are dropped)",
       expected="exit 143 within 1 s; CANCELLED bundle, \"reported\"; the source saw no request")
def _(ctx):
    hole = faults.blackhole()
    try:
        policy = docs.make_policy(["localhost"], [hole.port], loopback_addresses())
        plane = ctx.plane(source_url="https://localhost:%d/data.csv" % hole.port, policy=policy)
        _start(ctx, plane)
        plane.stop_when(_connecting_to(hole.port), what="a pending connect to the source", settle_s=SETTLE_S)
        plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    finally:
        hole.close()
    _expect_prompt(ctx, plane, what="the stop (the fakes answer the bundle PUT at once)")
    _expect_cancelled_bundle(ctx, plane)


@check("stop.fetch-tls", clauses=["CRAWLER-STOP-1", "CRAWLER-STOP-3"], level="MUST",
       title="SIGTERM during a TLS handshake with the source that never completes ends it at once",
       fakes="the node is PID 1; the source site accepts the connection and never answers the handshake",
       expected="exit 143 within 1 s; CANCELLED bundle, \"reported\"; the source saw no request")
def _(ctx):
    plane = ctx.plane()
    plane.site.add_fault(faults.tls_stall())
    _start(ctx, plane)
    plane.stop_when(lambda: any(ev.kind == "fault" for ev in plane.site.events),
                    what="a stalled TLS handshake with the source", settle_s=SETTLE_S)
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    _expect_prompt(ctx, plane, what="the stop (the fakes answer the bundle PUT at once)")
    _expect_cancelled_bundle(ctx, plane)


@check("stop.child", clauses=["CRAWLER-STOP-1", "CRAWLER-STOP-3", "CRAWLER-CHILD-10"], level="MUST",
       title="SIGTERM while the child runs kills it at once, then a cancelled bundle is stored",
       fakes="the node is PID 1; the scripted child sleeps for an hour; the store notes whether the child "
             "is still alive when the bundle PUT arrives",
       expected="the child dead within 1 s and before the bundle PUT; exit 143 within 1 s; CANCELLED "
                "bundle, \"reported\"")
def _(ctx):
    plane = ctx.plane(child={"mode": "sleep"})
    seen = {"pids": []}
    # As PID 1, the node's exit kills its whole namespace: only the child's
    # state when the bundle arrives shows that the node itself killed it.
    recorder = PutRecorder(plane, observe=lambda: [pid for pid in seen["pids"] if proc_alive(pid)])
    _start(ctx, plane)

    def child_running():
        if plane.child.started()():
            seen["pids"] = plane.child.pids()
        return bool(seen["pids"])
    t_signal = plane.stop_when(child_running, what="the running child", settle_s=SETTLE_S)
    deadline = Deadline(AFTER_STOP_TIMEOUT_S)
    while any(proc_alive(pid) for pid in seen["pids"]) and not deadline.over():
        time.sleep(POLL_INTERVAL_S)
    t_dead = time.monotonic()
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    ctx.expect(t_dead - t_signal <= STOP_BUDGET_S,
               expected="the child killed within %.1f s of the stop" % STOP_BUDGET_S,
               actual="it ran %.2f s more" % (t_dead - t_signal),
               diagnosis=lambda: stop_unnoticed(plane) or "kill the child's process group as soon as the stop "
                                                          "arrives")
    _expect_prompt(ctx, plane, what="the stop (the fakes answer the bundle PUT at once)")
    _expect_cancelled_bundle(ctx, plane)
    ctx.expect(not recorder.observed[0], expected="the child dead when the bundle PUT arrived",
               actual="pid(s) %s still running then" % recorder.observed[0],
               diagnosis="end the child at once on a stop, before reporting (CRAWLER-STOP-3); as PID 1 the "
                         "namespace's end kills it later, which is not the node ending it")


@check("stop.put-body", clauses=["CRAWLER-STOP-4"], level="MUST",
       title="SIGTERM while the result PUT's body is going out aborts it; a cancelled bundle follows",
       fakes="the node is PID 1; a 5 MB source and the harness's normaliser pinned (a result of about 7 MB); "
             "the store stops reading the result PUT's body after 64 KiB",
       expected="exit 143 within 1 s; two PUTs: the aborted result (never stored), then the CANCELLED "
                "bundle, stored, \"reported\"")
def _(ctx):
    # The harness's normaliser is pinned: the result's size (about 7 MB) is the arrangement, and
    # what a node's own normaliser makes of the rows is its example work.
    # A deployed result bound below 8 MiB (D21) gets a source that still fits it.
    source_bytes = min(PUT_BODY_SOURCE_BYTES, docs.MAX_CRAWLER_RESULT_BYTES * 5 // 8)
    plane = ctx.plane(source=bulky_csv(source_bytes), limits=bulky_limits(),
                      child=crawler_child.reference_behaviour())
    plane.store.add_fault(faults.stall(after_bytes=STALL_AFTER_BYTES), Match(method="PUT", first=1))
    _start(ctx, plane)
    port = plane.store.server.port
    state = {"last": None, "since": None}

    def blocked_mid_body():
        """The result PUT began and the bytes in flight stopped growing."""
        if not plane.put_started()():
            return False
        now, flight = time.monotonic(), _bytes_in_flight(port)
        if flight != state["last"]:
            state["last"], state["since"] = flight, now
            return False
        return now - state["since"] >= STABLE_S
    t_signal = plane.stop_when(blocked_mid_body, what="the result PUT's body, blocked")
    declared = dict((n.lower(), v) for n, v in plane.puts()[0].headers).get("content-length", "0")
    sent_at_most = state["last"] + STALL_AFTER_BYTES + READ_AHEAD_ALLOWANCE_BYTES
    if not (declared.isdigit() and sent_at_most < int(declared)):
        raise RuntimeError("arrangement: the node may have sent its whole body (Content-Length %s, up to %d "
                           "bytes sent) before the stop; socket buffers here are too large" % (declared,
                                                                                              sent_at_most))
    ctx.note("stopped with at most %d of %s body bytes sent" % (sent_at_most, declared))
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    _expect_prompt(ctx, plane, what="the stop (the fakes answer the bundle PUT at once)")
    expect_reported(ctx, plane, CANCELLED, exit_code=143)
    expect_put_count(ctx, plane, 2, "the aborted result PUT, then the bundle")
    ctx.expect(plane.stored_result() is None, expected="no result stored (its body was cut short)",
               actual="a result is stored",
               diagnosis=lambda: stop_unnoticed(plane) or "a stop while the PUT's body is still going out aborts "
                                                          "it: shut its socket down before the last byte is sent")
    ctx.expect(plane.puts()[1].t_start > t_signal, expected="the bundle PUT after the stop",
               actual="it began before the stop",
               diagnosis="the second PUT must be the cancelled bundle, sent once the stop aborted the result's PUT")


@check("stop.put-answer", clauses=["CRAWLER-STOP-4"], level="MUST",
       title="SIGTERM after the whole result body was sent: the node waits for the answer and succeeds",
       fakes="the node is PID 1; the store commits the result and holds its answer 2 s; SIGTERM once the "
             "body is in",
       expected="exit 0, stdout and stderr empty; the result stored; one PUT, no bundle")
def _(ctx):
    plane = ctx.plane()
    plane.store.add_fault(faults.delay(ANSWER_DELAY_S), Match(method="PUT", phase="response"))
    _start(ctx, plane)
    t_signal = plane.stop_when(plane.put_body_done(), what="the end of the result PUT's body")
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    expect_success(ctx, plane)
    expect_put_count(ctx, plane, 1, "the result; no bundle after a stored result")
    answer = plane.puts()[0].t_answer
    if answer is None or answer <= t_signal:
        raise RuntimeError("arrangement: the store answered the PUT before the stop")


@check("stop.put-answer-lost", clauses=["CRAWLER-STOP-4", "CRAWLER-STOP-5"], level="MUST",
       title="SIGTERM after the whole result body was sent, and no answer: CANCELLED failed when the grace "
             "runs out, no bundle",
       fakes="the node is PID 1; the store commits the result and never answers; SIGTERM once the body is in",
       expected="exit 143 between 7 and 9 s after the stop (CANCEL_GRACE_S 8 s); CANCELLED \"failed\"; one "
                "PUT, no bundle")
def _(ctx):
    # About 9 s: the clause's own grace (CANCEL_GRACE_S) is what is measured.
    plane = ctx.plane()
    plane.store.add_fault(faults.accept_then_hang(), Match(method="PUT"))
    _start(ctx, plane)
    plane.stop_when(plane.put_body_done(), what="the end of the result PUT's body")
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    expect_outcome(ctx, plane, CANCELLED, "failed", 143)
    expect_put_count(ctx, plane, 1, "the result; its fate is unknown, so no bundle")
    latency = plane.result.stop_latency_s
    low, high = docs.CANCEL_GRACE_S - STOP_BUDGET_S, docs.CANCEL_GRACE_S + STOP_BUDGET_S
    ctx.expect(latency is not None and low <= latency <= high,
               expected="exit between %.0f and %.0f s after the stop" % (low, high),
               actual="%.2f s" % latency if latency is not None else "no signal recorded",
               diagnosis="once the body is sent, wait for the answer up to CANCEL_GRACE_S, then exit at once")


@check("stop.second-signal", clauses=["CRAWLER-STOP-5"], level="MUST",
       title="a second SIGTERM while the cancelled bundle is in flight ends the run at once",
       fakes="the node is PID 1; the child sleeps; SIGTERM; the store never answers the bundle PUT; "
             "a second SIGTERM",
       expected="exit 143 within 1 s of the second stop; stderr exactly the CANCELLED \"failed\" line")
def _(ctx):
    plane = ctx.plane(child={"mode": "sleep"})
    plane.store.add_fault(faults.hang(), Match(method="PUT"))
    _start(ctx, plane)
    plane.stop_when(plane.child.started(), what="the running child", settle_s=SETTLE_S)
    t_second = plane.stop_when(plane.put_started(), what="the cancelled bundle's PUT", settle_s=SETTLE_S,
                               timeout=SHORT_TIMEOUT_S)
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    took = plane.result.t_exit - t_second
    ctx.expect(took <= STOP_BUDGET_S, expected="exit within %.1f s of the second stop" % STOP_BUDGET_S,
               actual="%.2f s (%s)" % (took, describe_run(plane)),
               diagnosis="a second stop ends the process now, whatever it is waiting for")
    expect_outcome(ctx, plane, CANCELLED, "failed", 143)
    want = docs.status_line(CANCELLED, "failed").decode("utf-8")
    ctx.expect(plane.result.stderr == want, expected="stderr exactly %r" % want,
               actual="stderr %r" % plane.result.stderr[:300],
               diagnosis="on a second stop print the status line and nothing else: no traceback, no second line")


@check("stop.sigint", clauses=["CRAWLER-STOP-1"], level="MUST",
       title="SIGINT mid-fetch is a stop like SIGTERM, never a KeyboardInterrupt",
       fakes="the node is PID 1; the source dribbles its answer; SIGINT",
       expected="exit 143 within 1 s; CANCELLED bundle, \"reported\"; no KeyboardInterrupt")
def _(ctx):
    plane = ctx.plane()
    plane.site.add_fault(faults.dribble(chunk_bytes=1, interval_s=DRIBBLE_INTERVAL_S), plane.site.source_match())
    _start(ctx, plane)
    plane.stop_when(plane.site.started(), signum=signal.SIGINT, what="the source's answer", settle_s=SETTLE_S)
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    ctx.expect("KeyboardInterrupt" not in plane.result.stderr, expected="no KeyboardInterrupt",
               actual="stderr %r" % plane.result.stderr[-300:],
               diagnosis="handle SIGINT with the same stop handler as SIGTERM, so Python's default "
                         "KeyboardInterrupt never reaches the code")
    _expect_prompt(ctx, plane, what="SIGINT (the fakes answer the bundle PUT at once)")
    _expect_cancelled_bundle(ctx, plane)
