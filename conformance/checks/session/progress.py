"""Progress events: the session's narration on the run's event log (SESSION-PROGRESS-1 to -7).

A person watching a session sees only these events: the worker arriving (`attempt_started`), each
probe starting before its read and settling after its report, with a class that says what to do
next, and the attempt finishing last. So their order, their facts and their batching are the
contract's; and since they are narration, an append that fails must change nothing else, and an
attempt never floods the log past 256 events.

The control plane judges every event it receives (schema, binding, payload digest, the
client_event_id's derivation, the cap) in its invariants, after every check; the checks here
judge what only a timeline shows: which events are made, in what order against the requests
they narrate, in which batches, and what becomes of the session when appends fail.
"""

import signal

from conformance import faults
from conformance.checks import check
from conformance.checks.session._common import (SCHEDULE_SLACK_S, capability_calls, creates, describe_run,
                                                each_variant, expect_summary, first_report, refusal, run_to_exit)
from conformance.planes.session import deploy
from conformance.planes.session.control import canonical

ROWS = [["Oslo", 709037], ["Bergen", 291940], ["Trondheim", 212660]]
COLUMNS = ["city", "population"]
OUTSIDE = "5e4d3c2b-1a09-4f8e-b7d6-c5b4a3928170"
# SESSION-PROGRESS-1: the facts of each event, exactly.
PROBE_FACTS = {"source_id", "probe_kind", "ordinal"}
SETTLED_FACTS = PROBE_FACTS | {"outcome", "code", "display_code", "retry_after_seconds", "bytes"}
# SESSION-PROGRESS-5: an append is cut off at EVENTS_TIMEOUT_S.
EVENTS_TIMEOUT_S = 2.0
# SESSION-PROGRESS-4: "sent as they are made, with no coalescing delay": an append follows the
# report it narrates within this (a round trip and an interpreter's scheduling on a loaded machine).
NO_DELAY_S = SCHEDULE_SLACK_S


def _events(plane, kind=None):
    return [e for e in plane.control.progress_events() if kind is None or e.event_type == kind]


def _of_probe(events, source_id, kind):
    return [e for e in events if (e.facts or {}).get("source_id") == source_id
            and (e.facts or {}).get("probe_kind") == kind]


@check("progress.events", clauses=["SESSION-PROGRESS-1"], level="MUST",
       title="attempt_started once; a started and a settled event per narrated probe, with exactly their facts",
       fakes="one session; a probe that succeeds (ordinal 7), one that fails out of scope (ordinal 0), one of an "
             "unknown kind and one whose source_id is no UUID (neither narrated); then the session closes",
       expected="attempt_started once with role session and stage_total 0; for each narrated probe one "
                "source_probe_started and one source_probe_completed with exactly the table's facts and the "
                "probe's ordinal (1 for ordinal 0); nothing for the other two; attempt_finished")
def _(ctx):
    plane = ctx.plane()
    source = plane.add_source(columns=COLUMNS, rows=ROWS)
    narrated = [(plane.probe("sample_rows", source, ordinal=7, limit=1), "sample_rows", source.source_id, 7),
                (plane.probe("source_inspect", OUTSIDE, ordinal=0), "source_inspect", OUTSIDE, 1)]
    silent = [plane.probe("row_count", source), plane.probe("sample_rows", request={"source_id": "not-a-uuid"})]
    run_to_exit(plane, [p for p, _k, _s, _o in narrated] + silent)
    started = _events(plane, "attempt_started")
    ctx.expect(len(started) == 1 and started[0].facts == {"role": "session", "stage_total": 0},
               expected="one attempt_started with facts role session, stage_total 0",
               actual=lambda: "%d, facts %s" % (len(started), [e.facts for e in started]),
               diagnosis="attempt_started is made once, after attempt:start is answered")
    events = _events(plane)
    for probe_id, kind, source_id, ordinal in narrated:
        mine = _of_probe(events, source_id, kind)
        types = [e.event_type for e in mine]
        facts_ok = (len(mine) == 2 and set(mine[0].facts) == PROBE_FACTS and set(mine[1].facts) == SETTLED_FACTS
                    and all(e.facts["ordinal"] == ordinal for e in mine))
        ctx.expect(types == ["source_probe_started", "source_probe_completed"] and facts_ok,
                   expected="source_probe_started then source_probe_completed for probe %s, with the table's facts "
                            "and ordinal %d" % (probe_id, ordinal),
                   actual=lambda: "%s, facts %s" % (types, [e.facts for e in mine]),
                   diagnosis="a narrated probe is a canonical-UUID source with one of the four kinds (D36); its "
                             "facts are exactly the table's, and an ordinal below 1 counts as 1")
    kinds = [(e.facts or {}).get("probe_kind") for e in events]
    ctx.expect("row_count" not in kinds and not any((e.facts or {}).get("source_id") == "not-a-uuid" for e in events),
               expected="no event for the probe of an unknown kind or of a source_id that is no UUID",
               actual="events %s" % [(e.event_type, e.facts) for e in events][:6],
               diagnosis="only narrated probes are narrated (a fact must be a valid fact value); they are reported")
    for probe_id in silent:
        ctx.expect((first_report(plane, probe_id) or {}).get("failure_code") == "PROBE_REQUEST_INVALID",
                   expected="the unnarrated probes still reported", actual=describe_run(plane),
                   diagnosis="every probe is reported, narrated or not")
    finished = _events(plane, "attempt_finished")
    ctx.expect(len(finished) == 1 and finished[0].facts == {"outcome": "closed"},
               expected="one attempt_finished with outcome closed", actual="%s" % [e.facts for e in finished],
               diagnosis="attempt_finished ends the stream")


@check("progress.order", clauses=["SESSION-PROGRESS-2"], level="MUST",
       title="started in its own append before the read; settled after the report, for every outcome",
       fakes="one session; a probe that succeeds, one whose report is answered 409 RESEARCH_PROBE_ALREADY_SETTLED, "
             "one refused out of scope (no read)",
       expected="each source_probe_started alone in an append that arrives before the probe's first create (or "
                "its report); each source_probe_completed in an append that arrives after its report was answered; "
                "both with the same source, kind and ordinal")
def _(ctx):
    plane = ctx.plane()
    source = plane.add_source(columns=COLUMNS, rows=ROWS)
    probes = [(plane.probe("source_inspect", source), source.source_id, True),
              (plane.probe("sample_rows", source, limit=2), source.source_id, True),
              (plane.probe("profile_columns", OUTSIDE), OUTSIDE, False)]
    plane.control.add_fault(refusal(409, "RESEARCH_PROBE_ALREADY_SETTLED"),
                            plane.control.report_match(skip=1, first=1))
    run_to_exit(plane, [p for p, _s, _r in probes])
    events = _events(plane)
    for index, (probe_id, source_id, reads) in enumerate(probes):
        kind = plane.control.handed_probes()[index]["probe_kind"]
        mine = _of_probe(events, source_id, kind)
        report = plane.control.reports(probe_id)[0]
        started = [e for e in mine if e.event_type == "source_probe_started"]
        settled = [e for e in mine if e.event_type == "source_probe_completed"]
        made = [c for c in creates(plane, source_id) if c.t > (started[0].call.t if started else 0)]
        first_read = made[0].t if reads and made else report.t
        ctx.expect(len(started) == 1 and len(started[0].call.doc) == 1 and started[0].call.t < first_read,
                   expected="probe #%d: source_probe_started alone in an append, before its %s" % (
                       index + 1, "first create" if reads else "report"),
                   actual=lambda: "%d started event(s)%s" % (len(started), ", in an append of %d arriving %+.3f s "
                                                             "from it" % (len(started[0].call.doc),
                                                                          started[0].call.t - first_read)
                                                             if started else ""),
                   diagnosis="a watcher learns of a probe before its read begins")
        answered = report.exchange.t_answer or report.t
        ctx.expect(len(settled) == 1 and settled[0].call.t > answered
                   and settled[0].facts["ordinal"] == started[0].facts["ordinal"],
                   expected="probe #%d: one source_probe_completed appended after its report was answered, with the "
                            "started event's ordinal" % (index + 1),
                   actual=lambda: "%d settled event(s)%s" % (len(settled), ", arriving %+.3f s from the report's "
                                                             "answer" % (settled[0].call.t - answered)
                                                             if settled else ""),
                   diagnosis="the settled event says the report was delivered (or found already settled)")


def _facts_of(plane, source_id, kind):
    found = [e.facts for e in _of_probe(_events(plane), source_id, kind) if e.event_type == "source_probe_completed"]
    return found[0] if found else None


@check("progress.settled-facts", clauses=["SESSION-PROGRESS-3"], level="MUST",
       title="the settled facts: OK and the result's size, or the wire code, its display code and class",
       fakes="acquisition timeout 1 s; probes that succeed, fail on a missing column, time out on a pending "
             "acquisition, are throttled (429 AGENT_BUDGET_EXCEEDED with Retry-After: 7, none, 0, 3600, 3601), and "
             "fail with a download of other bytes",
       expected="succeeded/OK/OK/0/len(canonical result); refused; timed_out; throttled with display "
                "SESSION_ACQUISITION_THROTTLED and retry_after_seconds 7, 0, 0, 3600, 0; failed; bytes 0 for every "
                "failure")
def _(ctx):
    plane = ctx.plane()
    good = plane.add_source(columns=COLUMNS, rows=ROWS)
    pending = plane.add_source(columns=COLUMNS, rows=ROWS, ready_after_reads=None)
    throttled = plane.add_source(columns=COLUMNS, rows=ROWS, refuse=(429, "AGENT_BUDGET_EXCEEDED"), retry_after_s=7)
    bare = plane.add_source(columns=COLUMNS, rows=ROWS, refuse=(429, "AGENT_BUDGET_EXCEEDED"))
    corrupt = plane.add_source(columns=COLUMNS, rows=ROWS, declared_bytes=b"x" * 200)
    # SESSION-BACKOFF-2: a Retry-After counts only as whole seconds 1..3600
    advised = dict((seconds, plane.add_source(columns=COLUMNS, rows=ROWS, refuse=(429, "AGENT_BUDGET_EXCEEDED"),
                                              retry_after_s=seconds)) for seconds in (0, 3600, 3601))
    cases = [
        (plane.probe("profile_columns", good), good, "profile_columns", ("succeeded", deploy.PROBE_OK_CODE, deploy.PROBE_OK_CODE, 0)),
        (plane.probe("sample_rows", good, columns=["nope"]), good, "sample_rows",
         ("refused", "PROBE_COLUMN_UNKNOWN", "PROBE_COLUMN_UNKNOWN", 0)),
        (plane.probe("source_inspect", pending), pending, "source_inspect",
         ("timed_out", "PROBE_SOURCE_ACQUISITION_TIMEOUT", "PROBE_SOURCE_ACQUISITION_TIMEOUT", 0)),
        (plane.probe("source_inspect", throttled), throttled, "source_inspect",
         ("throttled", "AGENT_BUDGET_EXCEEDED", "SESSION_ACQUISITION_THROTTLED", 7)),
        (plane.probe("source_inspect", bare), bare, "source_inspect",
         ("throttled", "AGENT_BUDGET_EXCEEDED", "SESSION_ACQUISITION_THROTTLED", 0)),
        (plane.probe("source_inspect", corrupt), corrupt, "source_inspect",
         ("failed", "PROBE_SOURCE_DOWNLOAD_FAILED", "PROBE_SOURCE_DOWNLOAD_FAILED", 0)),
    ] + [(plane.probe("source_inspect", source), source, "source_inspect",
          ("throttled", "AGENT_BUDGET_EXCEEDED", "SESSION_ACQUISITION_THROTTLED", 3600 if seconds == 3600 else 0))
         for seconds, source in sorted(advised.items())]
    run_to_exit(plane, [p for p, _s, _k, _w in cases], env={"MR_SESSION_WORKER_ACQUISITION_TIMEOUT_SECONDS": "1"})
    for probe_id, source, kind, (outcome, code, display, retry) in cases:
        facts = _facts_of(plane, source.source_id, kind) or {}
        result = (first_report(plane, probe_id) or {}).get("result")
        size = len(canonical(result)) if result is not None else 0
        got = (facts.get("outcome"), facts.get("code"), facts.get("display_code"), facts.get("retry_after_seconds"),
               facts.get("bytes"))
        wanted = (outcome, code, display, retry, size)
        ctx.expect(got == wanted, expected="settled facts outcome/code/display_code/retry_after_seconds/bytes %s"
                                           % "/".join(str(v) for v in wanted),
                   actual="/".join(str(v) for v in got),
                   diagnosis="the outcome is the display code's class, a throttle displays as "
                             "SESSION_ACQUISITION_THROTTLED with its Retry-After, and bytes is the result's "
                             "canonical length (0 without one)")


@check("progress.batches", clauses=["SESSION-PROGRESS-4"], level="MUST",
       title="events go out as made, in sequence, in appends keyed event-progress:1, 2, ... without a gap",
       fakes="one session; two narrated probes, one probe of an unknown kind between them; then the session closes",
       expected="batch numbers 1..n in order; events in sequence order across appends; attempt_started alone in "
                "the first append, each started event alone in its own, each settled event in an append that "
                "follows its report at once; attempt_finished in the last")
def _(ctx):
    plane = ctx.plane()
    source = plane.add_source(columns=COLUMNS, rows=ROWS)
    ids = [plane.probe("source_inspect", source), plane.probe("row_count", source),
           plane.probe("sample_rows", source, limit=1)]
    run_to_exit(plane, ids)
    appends = [c for c in plane.control.calls("append") if c.doc is not None]
    numbers = [int(c.key.rsplit(":", 1)[-1]) if c.key else None for c in appends]
    ctx.expect(numbers == list(range(1, len(appends) + 1)), expected="batch numbers 1, 2, ... in arrival order",
               actual="%s" % numbers, diagnosis="each flush is one append, numbered without a gap")
    sequences = [e.sequence for e in _events(plane)]
    ctx.expect(sequences == list(range(1, len(sequences) + 1)), expected="events numbered 1, 2, ... in order",
               actual="%s" % sequences, diagnosis="events are sent as made, in sequence order")
    shapes = [[e["event_type"] for e in c.doc] for c in appends]
    ctx.expect(shapes and shapes[0] == ["attempt_started"] and shapes[-1][-1:] == ["attempt_finished"]
               and all(shape == ["source_probe_started"] for shape in shapes if "source_probe_started" in shape),
               expected="attempt_started alone first, each source_probe_started alone, attempt_finished last",
               actual="appends %s" % shapes,
               diagnosis="flushes happen after attempt_started, after source_probe_started, after each report, at "
                         "the end")
    for probe_id in (ids[0], ids[2]):
        report = plane.control.reports(probe_id)[0]
        answered = report.exchange.t_answer or report.t
        after = [c for c in appends if c.t > answered]
        ctx.expect(after and "source_probe_completed" in [e["event_type"] for e in after[0].doc]
                   and after[0].t - answered <= NO_DELAY_S,
                   expected="the settled event in the first append after the report, within %.1f s" % NO_DELAY_S,
                   actual=lambda: "next append %s" % (["%s after %.3f s" % ([e["event_type"] for e in after[0].doc],
                                                                            after[0].t - answered)] if after else
                                                      "none"),
                   diagnosis="events are sent as they are made, with no coalescing delay")


@check("progress.append-failures", clauses=["SESSION-PROGRESS-5"], level="MUST",
       title="an append that fails is dropped and changes nothing else",
       fakes="variant refused: every append answers 500; variant reset: every append is reset without an answer; "
             "variant stalled: the first append (attempt_started) is never answered",
       expected="each append sent once; the probes claimed, answered and reported; the session closes with exit 0 "
                "and the right counts; when stalled, the first claim follows within EVENTS_TIMEOUT_S")
def _(ctx):
    def act(label, option):
        plane = ctx.plane()
        source = plane.add_source(columns=COLUMNS, rows=ROWS)
        if label == "stalled":
            plane.control.add_fault(faults.hang(), plane.control.events_match(first=1))
        else:
            plane.control.add_fault(option, plane.control.events_match())
        ids = [plane.probe("source_inspect", source), plane.probe("sample_rows", source, columns=["nope"])]
        run_to_exit(plane, ids)
        outcomes = [(first_report(plane, p) or {}).get("outcome") for p in ids]
        ctx.expect(outcomes == ["succeeded", "failed"], expected="both probes reported (variant %s)" % label,
                   actual=lambda: "%s (%s)" % (outcomes, describe_run(plane)),
                   diagnosis="probes are still claimed, answered and reported when appends fail")
        summary = expect_summary(ctx, plane, terminal_state="closed", variant=label)
        ctx.expect((summary["probes_answered"], summary["probes_failed"]) == (1, 1),
                   expected="probes_answered 1, probes_failed 1 (variant %s)" % label,
                   actual="%d, %d" % (summary["probes_answered"], summary["probes_failed"]),
                   diagnosis="an append's failure changes no count")
        keys = [c.key for c in plane.control.calls("append")]
        ctx.expect(len(keys) == len(set(keys)), expected="every append sent once (variant %s)" % label,
                   actual="keys %s" % keys, diagnosis="a failed append is dropped, never retried")
        if label == "stalled":
            first_append = plane.control.calls("append")[0]
            first_claim = plane.control.claims()[0]
            waited = first_claim.t - first_append.t
            ctx.expect(waited <= EVENTS_TIMEOUT_S + SCHEDULE_SLACK_S,
                       expected="the first claim within EVENTS_TIMEOUT_S of the stalled append",
                       actual="%.2f s" % waited, diagnosis="an append is cut off at EVENTS_TIMEOUT_S")
    each_variant(ctx, [("refused", refusal(500, "INTERNAL")), ("reset", faults.accept_then_reset()),
                       ("stalled", None)], act)


@check("progress.cap", clauses=["SESSION-PROGRESS-6"], level="MUST",
       title="at most MAX_PROGRESS_EVENTS_PER_ATTEMPT (256) events per attempt; probes go on being answered "
             "past the cap",
       fakes="one session; cap/2 + 2 narrated probes of a source outside the allowlist (each two events), then a "
             "probe that succeeds; then the session closes",
       expected="the cap's number of events in all, numbered 1..cap, no attempt_finished; every probe reported, the "
                "last one succeeded; the session closes normally")
def _(ctx):
    cap = deploy.MAX_PROGRESS_EVENTS_PER_ATTEMPT
    plane = ctx.plane()
    source = plane.add_source(columns=COLUMNS, rows=ROWS)
    ids = [plane.probe("source_inspect", OUTSIDE) for _ in range(cap // 2 + 2)] + [
        plane.probe("source_inspect", source)]
    run_to_exit(plane, ids)
    events = _events(plane)
    ctx.expect(len(events) == cap and max(e.sequence or 0 for e in events) == cap,
               expected="exactly %d events" % cap,
               actual="%d events, the highest numbered %s" % (len(events), max([e.sequence or 0 for e in events] or [0])),
               diagnosis="an attempt makes events up to the cap, then none")
    ctx.expect(not _events(plane, "attempt_finished"), expected="no attempt_finished past the cap",
               actual="attempt_finished sent", diagnosis="past the cap no event is made, attempt_finished included")
    reported = [p for p in ids if first_report(plane, p)]
    ctx.expect(len(reported) == len(ids) and first_report(plane, ids[-1]).get("outcome") == "succeeded",
               expected="all %d probes reported, the last succeeded" % len(ids),
               actual="%d reported; last %s" % (len(reported), (first_report(plane, ids[-1]) or {}).get("outcome")),
               diagnosis="probes go on being answered and reported past the cap")
    expect_summary(ctx, plane, terminal_state="closed")


@check("progress.finished-last", clauses=["SESSION-PROGRESS-7"], level="MUST",
       title="attempt_finished is the last word, with the terminal state or stopped; none before an attempt",
       fakes="variants: the session closes; the session's state is failed; a claim is refused "
             "ATTEMPT_FENCE_STALE; SIGTERM while idle; the dispatch was already claimed",
       expected="attempt_finished with outcome closed, failed, stopped, service_stopped, in the last capability "
                "call; for the consumed dispatch no event at all")
def _(ctx):
    def act(label, wanted):
        options = {"dispatch_state": "claimed"} if label == "consumed dispatch" else {}
        plane = ctx.plane(**options)
        if label == "claim refused":
            plane.control.add_fault(refusal(409, "ATTEMPT_FENCE_STALE"), plane.control.claim_match(skip=1, first=1))
        plane.start()
        if label == "closed":
            plane.wait_claims(2)
            plane.close_session()
        elif label == "session failed":
            plane.wait_claims(2)
            plane.close_session("failed")
        elif label == "SIGTERM":
            plane.stop_when(plane.control.started("claim", 2), signal.SIGTERM, what="the second claim")
        plane.wait()
        finished = _events(plane, "attempt_finished")
        if wanted is None:
            ctx.expect(not _events(plane), expected="no event (variant %s)" % label,
                       actual="%d event(s)" % len(_events(plane)),
                       diagnosis="no attempt was started, so there is nothing to finish")
            return
        calls = capability_calls(plane)
        last = calls[-1] if calls else None
        ctx.expect(len(finished) == 1 and last is not None and finished[0].facts == {"outcome": wanted}
                   and last.exchange.seq == finished[0].call.exchange.seq,
                   expected="attempt_finished with outcome %s in the last capability call (variant %s)" % (wanted,
                                                                                                          label),
                   actual=lambda: "%s; the last call %s" % ([e.facts for e in finished], last.verb if last else None),
                   diagnosis="attempt_finished ends the stream, with the terminal state or stopped after a failure, "
                             "and nothing follows it")
    each_variant(ctx, [("closed", "closed"), ("session failed", "failed"), ("claim refused", "stopped"),
                       ("SIGTERM", "service_stopped"), ("consumed dispatch", None)], act)
