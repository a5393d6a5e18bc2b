"""Source acquisition: create, settle, descriptor, download, bundle (SESSION-ACQUIRE-1 to -8).

A probe's bytes come only through the control plane: a create keyed by the source (two probes of
a source share one acquisition and one admission slot), reads of a pending acquisition about a
second apart within one ceiling, a descriptor judged before any byte is fetched, one anonymous
GET that never carries the capability to the store, and a bundle that is a crawler result bound
to this acquisition (D27). Each rule is what keeps a session from spending admission slots it
need not, from reading bytes meant for another attempt, or from handing a credential to a store.

Most checks queue one probe per variant in a single session (a source per variant, each
scripted at the control plane or the store), so one run judges a whole list.
"""

import urllib.parse

from conformance import faults
from conformance.checks import check
from conformance.checks.session._common import (SCHEDULE_SLACK_S, creates, describe_run, each_variant,
                                                expect_summary, first_report, refusal, run_to_exit, store_requests)
from conformance.planes.session import OMIT, MAX_BUNDLE_BYTES, descriptor_patch, document_patch
from conformance.servers import socket_buffer_allowance

ROWS = [["Oslo", 709037], ["Bergen", 291940], ["Trondheim", 212660]]
COLUMNS = ["city", "population"]
# SESSION-ACQUIRE-4: ACQUISITION_POLL_S, the node's own wait between reads of a pending acquisition.
ACQUISITION_POLL_S = 1.0
# The acquisition ceiling a check of SESSION-ACQUIRE-4 sets (MR_SESSION_WORKER_ACQUISITION_TIMEOUT_SECONDS):
# two polls' worth, so a pending acquisition is read at least once before it runs out.
SHORT_ACQUISITION_S = 2.0
# A body far past any bundle: what an endless download sends at most.
ENDLESS_EXTRA_BYTES = 64 << 20
OTHER_UUID = "7a1b2c3d-4e5f-4a6b-9c7d-8e9f0a1b2c3d"
OTHER_HEX = "ab" * 32
# SESSION-ACQUIRE-1: the acquisition-request body's keys, nothing else.
CREATE_KEYS = {"schema_version", "workspace_id", "run_id", "attempt_id", "fence", "session_id", "source_id"}


def _outcome(plane, probe_id):
    doc = first_report(plane, probe_id) or {}
    return doc.get("outcome"), doc.get("failure_code")


def _expect_codes(ctx, plane, expected, why):
    """Each probe of expected ({label: (probe_id, outcome, code)}) reported so."""
    wrong = ["%s: %s/%s" % ((label,) + _outcome(plane, probe_id))
             for label, (probe_id, outcome, code) in expected.items() if _outcome(plane, probe_id) != (outcome, code)]
    ctx.expect(not wrong, expected="each probe reported as its variant gives",
               actual=lambda: "%s (%s)" % ("; ".join(wrong[:6]), describe_run(plane)), diagnosis=why)


@check("acquire.create-key", clauses=["SESSION-ACQUIRE-1"], level="MUST",
       title="the create carries the binding and the source only, keyed by source and epoch",
       fakes="two sources S and T answered ready at once; probes of S, T, S",
       expected="each create's body has exactly the fence binding, session_id and source_id; both creates of S "
                "carry session:<attempt>:acquire:<S>:0 and share one acquisition; T's key is its own; all succeed")
def _(ctx):
    plane = ctx.plane()
    s = plane.add_source(columns=COLUMNS, rows=ROWS)
    t = plane.add_source(columns=COLUMNS, rows=ROWS[:1])
    ids = [plane.probe("source_inspect", s), plane.probe("source_inspect", t), plane.probe("sample_rows", s)]
    run_to_exit(plane, ids)
    outcomes = [_outcome(plane, p)[0] for p in ids]
    ctx.expect(outcomes == ["succeeded"] * 3, expected="the three probes succeed (a create answered 201)",
               actual=lambda: "%s (%s)" % (outcomes, describe_run(plane)), diagnosis="201 is the create's success")
    attempt = plane.control.binding["attempt_id"]
    for source, count in ((s, 2), (t, 1)):
        made = creates(plane, source.source_id)
        key = "session:%s:acquire:%s:0" % (attempt, source.source_id)
        ctx.expect(len(made) == count and all(c.key == key for c in made),
                   expected="%d create(s) of source %s, each keyed %s" % (count, source.source_id, key),
                   actual=lambda: "keys %s" % [c.key for c in made],
                   diagnosis="the key is the source and its epoch: probes of one source share one acquisition")
    bodies = [c.doc for c in creates(plane)]
    wrong = [sorted(set(b or {}) ^ CREATE_KEYS) for b in bodies if set(b or {}) != CREATE_KEYS]
    ctx.expect(not wrong, expected="create bodies of exactly %s" % ", ".join(sorted(CREATE_KEYS)),
               actual="keys off: %s" % wrong[:2], diagnosis="the worker has no way to steer the fetch")
    ctx.expect(len(plane.control.acquisitions()) == 2, expected="two acquisitions (one per source)",
               actual="%d" % len(plane.control.acquisitions()), diagnosis="the same key is the same acquisition")


@check("acquire.create-refused", clauses=["SESSION-ACQUIRE-2"], level="MUST",
       title="a refused or unanswered create fails the probe once; a throttle is not waited out",
       fakes="one session; creates of four sources: reset without an answer, 403 RESEARCH_SOURCE_FORBIDDEN, "
             "503 with a code, 429 AGENT_BUDGET_EXCEEDED with Retry-After: 7",
       expected="each probe reported failed with CONTROL_PLANE_UNREACHABLE, the refusal's code, or "
                "AGENT_BUDGET_EXCEEDED; one create per source; the throttled probe reported well before 7 s")
def _(ctx):
    plane = ctx.plane()
    cut = plane.add_source(columns=COLUMNS, rows=ROWS)
    forbidden = plane.add_source(columns=COLUMNS, rows=ROWS, refuse=(403, "RESEARCH_SOURCE_FORBIDDEN"))
    busy = plane.add_source(columns=COLUMNS, rows=ROWS, refuse=(503, "CRAWLER_CAPACITY_EXHAUSTED"))
    throttled = plane.add_source(columns=COLUMNS, rows=ROWS, refuse=(429, "AGENT_BUDGET_EXCEEDED"), retry_after_s=7)
    plane.control.add_fault(faults.accept_then_reset(), plane.control.acquisition_match(first=1))
    expected = {"no answer": (plane.probe("source_inspect", cut), "failed", "CONTROL_PLANE_UNREACHABLE"),
                "403": (plane.probe("source_inspect", forbidden), "failed", "RESEARCH_SOURCE_FORBIDDEN"),
                "503": (plane.probe("source_inspect", busy), "failed", "CRAWLER_CAPACITY_EXHAUSTED"),
                "throttle": (plane.probe("source_inspect", throttled), "failed", "AGENT_BUDGET_EXCEEDED")}
    run_to_exit(plane, [p for p, _o, _c in expected.values()])
    _expect_codes(ctx, plane, expected, "a refused create fails its probe with the refusal's code (or "
                                        "CONTROL_PLANE_UNREACHABLE), a throttle included")
    for source in (cut, forbidden, busy, throttled):
        made = creates(plane, source.source_id)
        ctx.expect(len(made) == 1, expected="one create for source %s" % source.source_id,
                   actual="%d" % len(made), diagnosis="SESSION-BACKOFF-3: a create is never retried")
    made = creates(plane, throttled.source_id)[0]
    report = plane.control.reports(expected["throttle"][0])[0]
    ctx.expect(report.t - made.t < 1.0 + SCHEDULE_SLACK_S, expected="the throttled probe reported at once",
               actual="%.2f s after its create" % (report.t - made.t),
               diagnosis="the Retry-After is the probe's advice to the person; the node neither waits nor creates "
                         "again")


def _misbound_variants():
    return [("workspace_id", {"workspace_id": OTHER_UUID}), ("run_id", {"run_id": OTHER_UUID}),
            ("attempt_id", {"attempt_id": OTHER_UUID}), ("research_session_id", {"research_session_id": OTHER_UUID}),
            ("source_id", {"source_id": OTHER_UUID}), ("producer_fence", {"producer_fence": 99}),
            ("producer_fence as text", {"producer_fence": "7"}), ("adapter_id", {"adapter_id": "public.ftp"}),
            ("crawler_session_id not a UUID", {"crawler_session_id": "crawl-1"}),
            ("producer_fence missing", {"producer_fence": OMIT})]


def _changes_id_when_ready(doc):
    if doc.get("status") == "result_ready":
        doc["crawler_session_id"] = OTHER_UUID
    return doc


@check("acquire.misbound", clauses=["SESSION-ACQUIRE-3"], level="MUST",
       title="an acquisition document not bound to this attempt and source fails the probe, before the store",
       fakes="one session; a source per fault: each binding key (workspace, run, attempt, session, source, fence, "
             "adapter) changed, a crawler_session_id that is no UUID, and one that changes on a read",
       expected="each probe reported failed with PROBE_SOURCE_ACQUISITION_MISBOUND; the store receives nothing")
def _(ctx):
    plane = ctx.plane()
    expected = {}
    for label, change in _misbound_variants():
        source = plane.add_source(columns=COLUMNS, rows=ROWS, patch=document_patch(**change))
        expected[label] = (plane.probe("source_inspect", source), "failed", "PROBE_SOURCE_ACQUISITION_MISBOUND")
    source = plane.add_source(columns=COLUMNS, rows=ROWS, ready_after_reads=1, patch=_changes_id_when_ready)
    expected["crawler_session_id changed on a read"] = (plane.probe("source_inspect", source), "failed",
                                                        "PROBE_SOURCE_ACQUISITION_MISBOUND")
    run_to_exit(plane, [p for p, _o, _c in expected.values()])
    _expect_codes(ctx, plane, expected, "every acquisition document repeats this attempt's binding and the probe's "
                                        "source; one that does not may be another attempt's bytes")
    ctx.expect(not store_requests(plane), expected="no request at the object store",
               actual="%d" % len(store_requests(plane)), diagnosis="a misbound acquisition's bundle is never fetched")


@check("acquire.polling", clauses=["SESSION-ACQUIRE-4"], level="MUST",
       title="a pending acquisition is read about every second until it settles",
       fakes="one session; a source that becomes ready on the second read, one that settles failed with a code, "
             "one that settles failed with prose for a code",
       expected="the first succeeds, its reads ACQUISITION_POLL_S apart; the others fail with the document's code "
                "and with PROBE_SOURCE_ACQUISITION_FAILED")
def _(ctx):
    plane = ctx.plane()
    slow = plane.add_source(columns=COLUMNS, rows=ROWS, ready_after_reads=2)
    coded = plane.add_source(columns=COLUMNS, rows=ROWS, fail_code="RESEARCH_SOURCE_UNACQUIRABLE")
    prose = plane.add_source(columns=COLUMNS, rows=ROWS, fail_code="the site said no, see https://x.test/why")
    expected = {"ready on the second read": (plane.probe("source_inspect", slow), "succeeded", None),
                "failed with a code": (plane.probe("source_inspect", coded), "failed", "RESEARCH_SOURCE_UNACQUIRABLE"),
                "failed with prose": (plane.probe("source_inspect", prose), "failed",
                                      "PROBE_SOURCE_ACQUISITION_FAILED")}
    run_to_exit(plane, [p for p, _o, _c in expected.values()])
    _expect_codes(ctx, plane, expected, "result_ready ends the wait; failed fails the probe with the document's "
                                        "code, or PROBE_SOURCE_ACQUISITION_FAILED when it is not a code")
    made = creates(plane, slow.source_id)[0]
    times = [made.exchange.t_answer or made.t] + [c.t for c in plane.control.calls("read")
                                                   if c.t > made.t and c.path.endswith(
                                                       plane.control.acquisitions()[0].crawler_session_id)]
    gaps = [b - a for a, b in zip(times, times[1:])]
    ctx.expect(len(gaps) == 2 and all(ACQUISITION_POLL_S - 0.05 <= g <= ACQUISITION_POLL_S + SCHEDULE_SLACK_S
                                      for g in gaps),
               expected="two reads, each about %.0f s after the answer before it" % ACQUISITION_POLL_S,
               actual="gaps %s" % ", ".join("%.2f s" % g for g in gaps),
               diagnosis="a pending acquisition is read again after ACQUISITION_POLL_S, no sooner and not much later")


@check("acquire.read-refusals", clauses=["SESSION-ACQUIRE-4"], level="MUST",
       title="a transient read failure is retried; any other refused read fails the probe",
       fakes="variant 503: the first read of a pending acquisition answers 503, then it is ready; variant 404: "
             "the read answers 404 NOT_FOUND",
       expected="503: a second read between 0.5 and 1 s later, and success; 404: failed with NOT_FOUND, one read")
def _(ctx):
    def act(label, status):
        plane = ctx.plane()
        source = plane.add_source(columns=COLUMNS, rows=ROWS, ready_after_reads=1)
        plane.control.add_fault(refusal(status, "SERVICE_UNAVAILABLE" if status == 503 else "NOT_FOUND"),
                                plane.control.acquisition_read_match(first=1))
        probe_id = plane.probe("source_inspect", source)
        run_to_exit(plane, [probe_id])
        reads = plane.control.calls("read")
        if status == 503:
            ok = _outcome(plane, probe_id) == ("succeeded", None) and len(reads) == 2
            gap = reads[1].t - (reads[0].exchange.t_answer or reads[0].t) if len(reads) == 2 else None
            ctx.expect(ok and ACQUISITION_POLL_S / 2 - 0.05 <= gap <= ACQUISITION_POLL_S + SCHEDULE_SLACK_S,
                       expected="one retried read %.1f..%.1f s after the 503, then success (variant %s)" % (
                           ACQUISITION_POLL_S / 2, ACQUISITION_POLL_S, label),
                       actual=lambda: "%s/%s, %d reads%s" % (_outcome(plane, probe_id) + (len(reads),)
                                                            + (", gap %.2f s" % gap if gap is not None else "",)),
                       diagnosis="a 5xx read is retried on SESSION-BACKOFF-1's schedule, base ACQUISITION_POLL_S")
        else:
            ctx.expect(_outcome(plane, probe_id) == ("failed", "NOT_FOUND") and len(reads) == 1,
                       expected="failed with NOT_FOUND after one read (variant %s)" % label,
                       actual=lambda: "%s/%s, %d reads" % (_outcome(plane, probe_id) + (len(reads),)),
                       diagnosis="a read refused with another status fails the probe with its code")
    each_variant(ctx, [("503", 503), ("404", 404)], act)


@check("acquire.ceiling", clauses=["SESSION-ACQUIRE-4"], level="MUST",
       title="create, reads and download share one ceiling: PROBE_SOURCE_ACQUISITION_TIMEOUT",
       fakes="acquisition timeout 2 s; a source that never settles; then a source whose download never answers",
       expected="both probes fail with PROBE_SOURCE_ACQUISITION_TIMEOUT about 2 s after their create; the "
                "session goes on")
def _(ctx):
    plane = ctx.plane()
    pending = plane.add_source(columns=COLUMNS, rows=ROWS, ready_after_reads=None)
    stuck = plane.add_source(columns=COLUMNS, rows=ROWS)
    plane.store.add_fault(faults.hang(), stuck.match())
    ids = [plane.probe("source_inspect", pending), plane.probe("source_inspect", stuck)]
    run_to_exit(plane, ids, env={"MR_SESSION_WORKER_ACQUISITION_TIMEOUT_SECONDS": "2"})
    for source, probe_id, what in ((pending, ids[0], "never settles"), (stuck, ids[1], "download never answers")):
        made = creates(plane, source.source_id)[0]
        report = plane.control.reports(probe_id)[0]
        took = report.t - made.t
        ctx.expect(_outcome(plane, probe_id) == ("failed", "PROBE_SOURCE_ACQUISITION_TIMEOUT")
                   and SHORT_ACQUISITION_S - 0.1 <= took <= SHORT_ACQUISITION_S + SCHEDULE_SLACK_S,
                   expected="PROBE_SOURCE_ACQUISITION_TIMEOUT %.0f s after the create (%s)" % (SHORT_ACQUISITION_S,
                                                                                            what),
                   actual=lambda: "%s/%s %.2f s after the create" % (_outcome(plane, probe_id) + (took,)),
                   diagnosis="the acquisition timeout bounds create, reads and download together (D35)")
    expect_summary(ctx, plane, terminal_state="closed")


@check("acquire.expired", clauses=["SESSION-ACQUIRE-5"], level="MUST",
       title="an expired acquisition is reopened once, under a new epoch",
       fakes="source A's first acquisition expires on its read; B's on its create; C's two acquisitions both "
             "expire; a second probe of A follows",
       expected="A and B succeed after a second create keyed :1; C fails with CRAWLER_SESSION_EXPIRED after "
                "exactly two creates; the later probe of A keeps epoch 1")
def _(ctx):
    plane = ctx.plane()
    a = plane.add_source(columns=COLUMNS, rows=ROWS, expire_once=True)
    b = plane.add_source(columns=COLUMNS, rows=ROWS, expire_once="create")
    c = plane.add_source(columns=COLUMNS, rows=ROWS, expire_acquisitions=2, expire_once="create")
    expected = {"A": (plane.probe("source_inspect", a), "succeeded", None),
                "B": (plane.probe("source_inspect", b), "succeeded", None),
                "C": (plane.probe("source_inspect", c), "failed", "CRAWLER_SESSION_EXPIRED"),
                "A again": (plane.probe("sample_rows", a), "succeeded", None)}
    run_to_exit(plane, [p for p, _o, _c in expected.values()])
    _expect_codes(ctx, plane, expected, "an expiry raises the source's epoch and create and settle are tried once "
                                        "more; a second expiry fails the probe")
    attempt = plane.control.binding["attempt_id"]
    for source, epochs in ((a, [0, 1, 1]), (b, [0, 1]), (c, [0, 1])):
        keys = [k.key for k in creates(plane, source.source_id)]
        wanted = ["session:%s:acquire:%s:%d" % (attempt, source.source_id, e) for e in epochs]
        ctx.expect(keys == wanted, expected="creates keyed with epochs %s" % epochs,
                   actual="keys ending %s" % [k.rsplit(":", 1)[-1] for k in keys],
                   diagnosis="a new epoch gives a new key, once per probe, and stays raised for later probes")


def _descriptor_variants(store_origin, tripwire_origin):
    big = MAX_BUNDLE_BYTES + 1
    bad = "PROBE_SOURCE_DOWNLOAD_INVALID"
    return [
        ("no result_download", document_patch(result_download=OMIT), "PROBE_SOURCE_RESULT_INVALID"),
        ("result_download a list", document_patch(result_download=[]), "PROBE_SOURCE_RESULT_INVALID"),
        ("request_digest a number", document_patch(request_digest=7), "PROBE_SOURCE_RESULT_INVALID"),
        ("attestation null", document_patch(egress_policy_attestation=None), "PROBE_SOURCE_RESULT_INVALID"),
        ("authority digest missing", document_patch(source_authority_digest=OMIT), "PROBE_SOURCE_RESULT_INVALID"),
        ("size over the cap", descriptor_patch(bundle_size_bytes=big), "PROBE_SOURCE_TOO_LARGE"),
        ("size 2^53 - 1", descriptor_patch(bundle_size_bytes=9007199254740991), "PROBE_SOURCE_TOO_LARGE"),
        ("size 0", descriptor_patch(bundle_size_bytes=0), bad),
        ("size -1", descriptor_patch(bundle_size_bytes=-1), bad),
        ("size as text", descriptor_patch(bundle_size_bytes="1024"), bad),
        ("size a fraction", descriptor_patch(bundle_size_bytes=1024.5), bad),
        ("size true", descriptor_patch(bundle_size_bytes=True), bad),
        ("bundle_sha256 missing", descriptor_patch(bundle_sha256=OMIT), bad),
        ("url over plain http", lambda d: _url(d, lambda u: u.replace("https://", "http://", 1)), bad),
        ("url without its query", lambda d: _url(d, lambda u: u.split("?", 1)[0]), bad),
        ("url on another host", lambda d: _url(d, lambda u: u.replace(store_origin, tripwire_origin, 1)), bad),
        ("url outside the bucket", lambda d: _url(d, lambda u: u.replace(store_origin + "/", store_origin
                                                                         + "/other-bucket/", 1)), bad),
        ("expired", descriptor_patch(expires_at="2020-01-01T00:00:00Z"), bad),
        ("expires_at not a timestamp", descriptor_patch(expires_at="2099-01-01 00:00:00"), bad),
        ("another crawler_session_id", descriptor_patch(crawler_session_id=OTHER_UUID), bad),
        ("another request_digest", descriptor_patch(request_digest=OTHER_HEX), bad),
        ("another source_id", descriptor_patch(source_id=OTHER_UUID), bad),
        ("another source_authority_digest", descriptor_patch(source_authority_digest=OTHER_HEX), bad),
    ]


def _url(doc, change):
    download = doc.get("result_download")
    if isinstance(download, dict):
        download["url"] = change(download["url"])
    return doc


@check("acquire.descriptor", clauses=["SESSION-ACQUIRE-6"], level="MUST",
       title="the download descriptor is judged before any byte is fetched",
       fakes="one session; a source per fault of a ready acquisition: no descriptor or one that is a list, a "
             "digest or the attestation that is no string, the size over "
             "the cap, a size that is no integer in range, no bundle_sha256, a URL off the rules (plain http, no "
             "query, another host, outside the bucket), an expiry past or malformed, a binding different from the "
             "acquisition's",
       expected="PROBE_SOURCE_RESULT_INVALID, PROBE_SOURCE_TOO_LARGE or PROBE_SOURCE_DOWNLOAD_INVALID as the clause "
                "says (D14); the object store (and every other host) receives no request")
def _(ctx):
    plane = ctx.plane()
    expected = {}
    for label, patch, code in _descriptor_variants(plane.store.origin, plane.tripwire.origin):
        source = plane.add_source(columns=COLUMNS, rows=ROWS, patch=patch)
        expected[label] = (plane.probe("source_inspect", source), "failed", code)
    run_to_exit(plane, [p for p, _o, _c in expected.values()])
    _expect_codes(ctx, plane, expected, "a descriptor that breaks a rule fails the probe before any byte, with the "
                                        "code of SESSION-ACQUIRE-6")
    ctx.expect(not store_requests(plane), expected="no request at the object store",
               actual="%d" % len(store_requests(plane)), diagnosis="the descriptor is judged before the download")


@check("acquire.download", clauses=["SESSION-ACQUIRE-7"], level="MUST",
       title="one anonymous GET of the URL, bounded by the declared size and verified",
       fakes="one session; a good source; then the store answers 404; the descriptor declares other bytes of the "
             "same length; it declares one byte more than is served; the store sends an endless body; the store "
             "redirects to the good bundle",
       expected="the good probe's GET is the descriptor's URL byte for byte with no Authorization or Cookie; each "
                "faulty download fails with PROBE_SOURCE_DOWNLOAD_FAILED after one GET; the endless body is read "
                "no further than the declared size (and the socket buffers)")
def _(ctx):
    plane = ctx.plane()
    good = plane.add_source(columns=COLUMNS, rows=ROWS)
    missing = plane.add_source(columns=COLUMNS, rows=ROWS)
    plane.store.add_fault(faults.status(404, s3_code="NoSuchKey"), missing.match())
    other = plane.add_source(columns=COLUMNS, rows=ROWS)
    other_bytes = plane.add_source(columns=COLUMNS, rows=ROWS, declared_bytes=bytes(reversed(other.bundle.raw)))
    longer = plane.add_source(columns=COLUMNS, rows=ROWS)
    longer_declared = plane.add_source(columns=COLUMNS, rows=ROWS, declared_bytes=longer.bundle.raw + b" ")
    endless = plane.add_source(columns=COLUMNS, rows=ROWS)
    plane.store.add_fault(faults.oversize(ENDLESS_EXTRA_BYTES, content_length="absent"), endless.match())
    moved = plane.add_source(columns=COLUMNS, rows=ROWS)
    plane.store.add_fault(faults.redirect(good.url), moved.match())
    failed = "PROBE_SOURCE_DOWNLOAD_FAILED"
    order = [("good", good, "succeeded", None), ("404", missing, "failed", failed),
             ("other bytes", other_bytes, "failed", failed), ("one byte short", longer_declared, "failed", failed),
             ("endless", endless, "failed", failed), ("redirect", moved, "failed", failed)]
    expected = dict((label, (plane.probe("source_inspect", source), outcome, code))
                    for label, source, outcome, code in order)
    run_to_exit(plane, [p for p, _o, _c in expected.values()])
    _expect_codes(ctx, plane, expected, "a download with another status, length or hash fails the probe")
    gets = store_requests(plane, good)
    headers = dict((k.lower(), v) for k, v in gets[0].headers) if gets else {}
    # The transcript masks the query; the store answers 200 only when the signed query is intact.
    path = urllib.parse.urlsplit(good.url).path
    ctx.expect(len(gets) == 1 and gets[0].method == "GET" and gets[0].path.split("?", 1)[0] == path
               and gets[0].status == 200 and "authorization" not in headers and "cookie" not in headers,
               expected="one GET of the descriptor's URL, byte for byte, with no Authorization and no Cookie",
               actual=lambda: "%d request(s); %s; status %s; headers %s" % (
                   len(gets), " ".join(g.method + " " + g.path.split("?")[0] for g in gets),
                   gets[0].status if gets else None, ", ".join(sorted(headers))),
               diagnosis="the download is anonymous: a credential must never reach the store")
    for label, source in (("404", missing), ("other bytes", other_bytes), ("one byte short", longer_declared),
                          ("endless", endless), ("redirect", moved)):
        count = len(store_requests(plane, source))
        ctx.expect(count == 1, expected="one GET (variant %s)" % label, actual="%d" % count,
                   diagnosis="a download is never retried, and a redirect never followed (SESSION-BACKOFF-3)")
    sent = store_requests(plane, endless)[0].resp_bytes
    bound = len(endless.bundle.raw) + socket_buffer_allowance() + (1 << 20)
    ctx.expect(sent <= bound, expected="the endless body read no further than its declared size",
               actual="the store sent %d bytes (declared %d)" % (sent, len(endless.bundle.raw)),
               diagnosis="the read stops one byte past bundle_size_bytes")


def _bundle_variants():
    def receipt(**changes):
        def patch(doc):
            doc["acquisition_receipt"].update(changes)
            return doc
        return patch
    return [
        ("a bundle for another source", dict(bundle_source_id=OTHER_UUID), "PROBE_SOURCE_RESULT_INVALID"),
        ("another request_digest", dict(request_digest=OTHER_HEX), "PROBE_SOURCE_RESULT_INVALID"),
        ("another attestation", dict(egress_policy_attestation=OTHER_HEX), "PROBE_SOURCE_RESULT_INVALID"),
        ("adapter_id other", dict(bundle_patch=lambda d: dict(d, adapter_id="public.ftp")),
         "PROBE_SOURCE_RESULT_INVALID"),
        ("not canonical", dict(raw_patch=lambda raw: raw.replace(b"{", b"{ ", 1)), "PROBE_SOURCE_RESULT_INVALID"),
        ("receipt normalized_size_bytes off", dict(bundle_patch=receipt(normalized_size_bytes=4)),
         "PROBE_SOURCE_RESULT_INVALID"),
        ("receipt normalized_content_sha256 off", dict(bundle_patch=receipt(normalized_content_sha256=OTHER_HEX)),
         "PROBE_SOURCE_RESULT_INVALID"),
        ("schema_version not a crawler result's", dict(bundle_patch=lambda d: dict(d, schema_version="other.v9")),
         "PROBE_SOURCE_RESULT_INVALID"),
        ("receipt source_id other", dict(bundle_patch=receipt(source_id="other-source")),
         "PROBE_SOURCE_RESULT_INVALID"),
        ("not JSON", dict(raw_patch=lambda raw: raw[:-1]), "PROBE_SOURCE_RESULT_INVALID"),
    ]


@check("acquire.bundle", clauses=["SESSION-ACQUIRE-8"], level="MUST",
       title="the bundle is a crawler result for this acquisition, its content at most 16 MiB",
       fakes="one session; a source per fault of the downloaded bytes (another source's bundle, another "
             "request_digest or attestation than the acquisition's, another adapter, not canonical, a receipt "
             "whose content digest or size disagrees with the content, another result schema, not JSON), and a "
             "bundle whose content is 16 MiB + 1 bytes",
       expected="PROBE_SOURCE_RESULT_INVALID for each fault, PROBE_SOURCE_TOO_LARGE for the large content; a "
                "good source after them succeeds")
def _(ctx):
    plane = ctx.plane()
    expected = {}
    for label, options, code in _bundle_variants():
        source = plane.add_source(columns=COLUMNS, rows=ROWS, **options)
        expected[label] = (plane.probe("source_inspect", source), "failed", code)
    line = b'["' + b"x" * 1021 + b'"]\n'   # 1026 bytes a row
    content = b'["v"]\n' + line * ((16 << 20) // len(line) + 1)
    large = plane.add_source(columns=["v"], content=content)
    expected["content over 16 MiB"] = (plane.probe("source_inspect", large), "failed", "PROBE_SOURCE_TOO_LARGE")
    good = plane.add_source(columns=COLUMNS, rows=ROWS)
    expected["good"] = (plane.probe("source_inspect", good), "succeeded", None)
    run_to_exit(plane, [p for p, _o, _c in expected.values()])
    _expect_codes(ctx, plane, expected, "the bundle is checked as a crawler result bound to this acquisition, and "
                                        "its decoded content against MAX_SOURCE_BYTES")
