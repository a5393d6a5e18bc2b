"""The upstream's peers: documents as its real control plane and crawler may write them (SESSION-PEER-*).

The node stands in for the upstream session worker against the upstream's Studio and crawler.
Where the upstream reads a document leniently, those peers may legally write it in forms our own
fakes never do: allowed callback paths with the attempt filled in or as a bare prefix, members
nobody defined, 7.0 for 7, an interval as text, an instant with an offset, a 201 where we answer
200, an acquisition that says it expired in a document rather than a 410, a bundle with the
upstream crawler's CSV and Reader fields. Each check runs the node against such a variant
(conformance/planes/session/peer.py, built on conformance/dialect.py) and judges only what the
platform observes: the probes answered and reported, their results bound to the bytes served, the
session's end. A node that reads only our dialect fails them where the upstream would not.
"""

import hashlib
import uuid

from conformance import faults
from conformance.checks import check
from conformance.checks.session._common import (creates, describe_run, each_variant, expect_summary, first_report,
                                                policy_digest, relation_problems, run_to_exit)
from conformance.planes.session import deploy
from conformance.planes.session.peer import (LEASE_PATH_FORMS, acquisition_members, acquisition_numbers,
                                             bundle_members, claim_forms, claim_members, lease_forms, lease_paths,
                                             object_lines, refusal_body, upstream_csv, upstream_v1)

COLUMNS = ["city", "population", "note"]
ROWS = [["Oslo", 709037, None], ["Bergen", 291940, "port"], ["Trondheim", 212660, None]]
# The kinds a peer check asks of each variant's source: every kind, the vocabulary's shapes.
KINDS = [("source_inspect", {}), ("sample_rows", {"limit": 2}), ("profile_columns", {}),
         ("evaluate_expression", {"expression": {"aggregate": "count"}})]
# An interval a claim answer writes as text (SESSION-PEER-1): seconds, long enough to tell from the
# lease's 0.1 s in the gaps between idle claims.
TEXT_INTERVAL_S = 0.4
# How much shorter than an interval in force a gap between two idle claims may look: both ends
# are arrival times at the fake, and a wait measured from the answer only makes a gap longer.
GAP_TOLERANCE = 0.9
# The plane's probe timeout (conformance/planes/session/plane.py), written as a deployment might.
PROBE_TIMEOUT_TEXT = " 10.0 "
PROBE_TIMEOUT_S = 10.0


def _outcome(plane, probe_id):
    doc = first_report(plane, probe_id) or {}
    return doc.get("outcome"), doc.get("failure_code")


def _expect_succeeded(ctx, plane, probes, why):
    """Each probe of probes ({label: probe_id}) reported succeeded."""
    wrong = ["%s: %s/%s" % ((label,) + _outcome(plane, probe_id)) for label, probe_id in probes.items()
             if _outcome(plane, probe_id) != ("succeeded", None)]
    ctx.expect(not wrong, expected="every probe answered and reported succeeded",
               actual=lambda: "%s (%s)" % ("; ".join(wrong[:4]), describe_run(plane)), diagnosis=why)


def _expect_bound(ctx, plane, probes, content, data_format, columns, rows):
    """Each succeeded result of probes ({label: (probe_id, kind, request)}) is bound to `content`
    (its SHA-256, length and format) and keeps SESSION-PROBE-7's relations to its columns and rows."""
    digest, wrong = hashlib.sha256(content).hexdigest(), []
    for label, (probe_id, kind, request) in probes.items():
        result = (first_report(plane, probe_id) or {}).get("result")
        if not isinstance(result, dict):
            continue  # _expect_succeeded names it
        off = ["%s %r" % (key, result.get(key)) for key, value in (
            ("content_sha256", digest), ("content_bytes", len(content)), ("data_format", data_format))
            if result.get(key) != value]
        off += relation_problems(kind, request, result, columns, rows)[:1]
        if off:
            wrong.append("%s: %s" % (label, "; ".join(off[:2])))
    ctx.expect(not wrong, expected="every result bound to the bytes served (SHA-256 %s..., %d bytes, %s)"
               % (digest[:12], len(content), data_format), actual=lambda: "; ".join(wrong[:3]),
               diagnosis="the answer is read off the content the bundle carries, whatever form the crawler wrote")


def _every_kind(plane, source, label):
    return dict(("%s of %s" % (kind, label), (plane.probe(kind, source, **request), kind,
                                              dict(request, source_id=source.source_id)))
                for kind, request in KINDS)


@check("peer.lease-paths", clauses=["SESSION-PEER-2"], level="MUST",
       title="allowed_callback_paths as the upstream checks them: concrete paths, the producer prefix, an "
             "attempt's path",
       fakes="the lease's allowed_callback_paths are the seven templates with the attempt id filled in; only "
             "/internal/v3/producer/; only /internal/v3/producer/attempts/<attempt id> (one form per run); a "
             "probe whose acquisition is read once",
       expected="each lease admitted: start, heartbeats, events, claims, the acquisition's create and read and "
                "the report all sent and answered; the probe succeeds; the session closes, exit 0")
def _(ctx):
    def act(label, form):
        plane = ctx.plane(lease_patch=lease_paths(form))
        source = plane.add_source(columns=COLUMNS, rows=ROWS, ready_after_reads=1)
        probe_id = plane.probe("sample_rows", source, limit=2)
        plane.start()
        plane.wait_report(probe_id)
        plane.wait_heartbeats(1)
        plane.close_session()
        plane.wait()
        expect_summary(ctx, plane, terminal_state="closed", variant=label)
        _expect_succeeded(ctx, plane, {label: probe_id}, "a lease whose paths the upstream admits runs a session")
        used = set(c.verb for c in plane.control.calls() if c.status not in (None, "fault") and c.status < 300)
        missing = sorted(set(deploy.templates()) - used)
        ctx.expect(not missing, expected="every verb sent and answered (variant %s)" % label,
                   actual="never answered: %s" % ", ".join(missing),
                   diagnosis="each entry allows its own path and what lies below it; the node sends every call "
                             "the lease allows")
    each_variant(ctx, [(form, form) for form in LEASE_PATH_FORMS], act)


@check("peer.lease-forms", clauses=["SESSION-PEER-1"], level="MUST",
       title="a lease in the upstream's forms: any schema_version, whole-second intervals, a base with "
             "trailing slashes, a repeated source, context members nobody defined",
       fakes="the lease's schema_version 3.1.0, intervals of 1 s (heartbeat and claim) and 600 s, "
             "callback_base_url ending in //, its one source id twice in source_ids, and members nobody "
             "defined (a fraction and a 2^70 among them) in its context",
       expected="the lease admitted; a probe of the allowed source succeeds; the session closes, exit 0")
def _(ctx):
    plane = ctx.plane(lease_patch=lease_forms())
    source = plane.add_source(columns=COLUMNS, rows=ROWS)
    probe_id = plane.probe("source_inspect", source)
    run_to_exit(plane, [probe_id])
    expect_summary(ctx, plane, terminal_state="closed")
    _expect_succeeded(ctx, plane, {"source_inspect": probe_id},
                      "the upstream checks neither the lease's schema_version nor the context's other members, "
                      "strips every trailing /, keeps a repeated source once, and takes whole seconds")


@check("peer.claim-members", clauses=["SESSION-PEER-1"], level="MUST",
       title="claim answers with members nobody defined, at their top and in their probe",
       fakes="every claim answer, and each probe in one, carries a member nobody defined holding every JSON "
             "type, a fraction and 2^70; two probes",
       expected="every claim accepted (keys advance 1, 2, 3, ... with no resend); both probes succeed; the "
                "session closes, exit 0")
def _(ctx):
    plane = ctx.plane(claim_patch=claim_members())
    source = plane.add_source(columns=COLUMNS, rows=ROWS)
    probes = {"first": plane.probe("sample_rows", source, limit=1), "second": plane.probe("source_inspect", source)}
    run_to_exit(plane, list(probes.values()))
    expect_summary(ctx, plane, terminal_state="closed")
    _expect_succeeded(ctx, plane, probes, "the upstream reads the members it knows and ignores the others")
    numbers = [int(c.key.rsplit(":", 1)[-1]) for c in plane.control.claims() if c.key]
    ctx.expect(numbers == list(range(1, len(numbers) + 1)),
               expected="claim keys numbered 1, 2, 3, ... (every answer accepted)", actual="%s" % numbers[:12],
               diagnosis="an answer with members nobody defined is an answer, not a failed claim sent again")


@check("peer.claim-forms", clauses=["SESSION-PEER-1"], level="MUST",
       title="claim answers in the upstream's forms: session_state null, claimed 1, the interval as text, a "
             "probe id in upper case",
       fakes="every live answer's session_state null, claimed 1 when it hands out a probe, "
             "claim_poll_interval_seconds \"%.1f\" (text); the probe's id in upper case" % TEXT_INTERVAL_S,
       expected="the probe answered, its report at the path of its id's canonical text with its body and key "
                "naming it as the claim did; idle claims about %.1f s apart; the session closes, exit 0"
                % TEXT_INTERVAL_S)
def _(ctx):
    plane = ctx.plane(claim_patch=claim_forms("%.1f" % TEXT_INTERVAL_S))
    source = plane.add_source(columns=COLUMNS, rows=ROWS)
    spelled = str(uuid.uuid4()).upper()
    probe_id = plane.probe("sample_rows", source, probe_id=spelled, limit=1)
    plane.start()
    report = plane.wait_report(probe_id)
    seen = len(plane.control.claims())
    plane.wait_claims(seen + 3)
    plane.close_session()
    plane.wait()
    expect_summary(ctx, plane, terminal_state="closed")
    doc = report.doc or {}
    attempt = plane.control.binding["attempt_id"]
    ctx.expect(report.ids.get("probe_id") == spelled.lower() and doc.get("probe_id") == spelled
               and report.key == "session:%s:result:%s" % (attempt, spelled) and doc.get("outcome") == "succeeded",
               expected="a succeeded report at .../probes/%s:result, its body's probe_id and its key %s"
                        % (spelled.lower(), spelled),
               actual=lambda: "path id %s, body probe_id %s, key %s, outcome %s" % (
                   report.ids.get("probe_id"), doc.get("probe_id"), report.key, doc.get("outcome")),
               diagnosis="the upstream reads a probe id with uuid.UUID(): the path carries its canonical text, the "
                         "body and the key the id as the claim wrote it")
    claims = plane.control.claims()
    gaps = [b.t - a.t for a, b in zip(claims[seen:], claims[seen + 1:])]
    ctx.expect(bool(gaps) and min(gaps) >= TEXT_INTERVAL_S * GAP_TOLERANCE,
               expected="idle claims at least %.1f s apart (the interval written as text)" % TEXT_INTERVAL_S,
               actual="gaps %s" % ", ".join("%.2f" % g for g in gaps),
               diagnosis="the upstream reads the interval with float(): \"%.1f\" is %.1f s" % (TEXT_INTERVAL_S,
                                                                                             TEXT_INTERVAL_S))


@check("peer.acquisition-members", clauses=["SESSION-PEER-1"], level="MUST",
       title="acquisition documents with members nobody defined and the crawler session id in upper case",
       fakes="every acquisition document, and its result_download, carries a member nobody defined; the crawler "
             "session id is written in upper case (the descriptor's too); the acquisition is read once",
       expected="the probes succeed; the read's path carries the id's canonical text; the session closes")
def _(ctx):
    plane = ctx.plane()
    source = plane.add_source(columns=COLUMNS, rows=ROWS, ready_after_reads=1, patch=acquisition_members())
    probes = _every_kind(plane, source, "the source")
    run_to_exit(plane, [p for p, _k, _r in probes.values()])
    expect_summary(ctx, plane, terminal_state="closed")
    _expect_succeeded(ctx, plane, dict((label, p) for label, (p, _k, _r) in probes.items()),
                      "the upstream reads the members it knows and parses the crawler session id with uuid.UUID()")
    ids = [a.crawler_session_id for a in plane.control.acquisitions()]
    reads = [c.ids.get("crawler_session_id") for c in plane.control.calls("read")]
    ctx.expect(bool(reads) and all(r in ids for r in reads),
               expected="reads of the acquisition at its id's canonical text", actual="reads of %s" % reads,
               diagnosis="a path carries an id in its one canonical spelling")


@check("peer.acquisition-numbers", clauses=["SESSION-PEER-1"], level="MUST",
       title="producer_fence written 7.0 and the descriptor's expiry with an offset or a fraction",
       fakes="one session; a source per form of expires_at (+00:00, a fraction, +05:30, -05:00 with a "
             "fraction), every document's producer_fence a float",
       expected="every probe succeeds; the session closes, exit 0")
def _(ctx):
    plane = ctx.plane()
    probes = {}
    for form in ("+00:00", "fraction", "offset", "offset-fraction"):
        source = plane.add_source(columns=COLUMNS, rows=ROWS, patch=acquisition_numbers(form))
        probes["expires_at %s" % form] = plane.probe("source_inspect", source)
    run_to_exit(plane, list(probes.values()))
    expect_summary(ctx, plane, terminal_state="closed")
    _expect_succeeded(ctx, plane, probes, "the upstream compares the fence with != (7.0 is 7), and an instant is "
                                          "the same instant in any ISO 8601 form with its zone")


@check("peer.expired-document", clauses=["SESSION-PEER-3", "SESSION-ACQUIRE-5"], level="MUST",
       title="an acquisition that settles failed with CRAWLER_SESSION_EXPIRED is re-opened once, as a 410 is",
       fakes="source A's first create answered 201 with a document failed/CRAWLER_SESSION_EXPIRED; B's first "
             "acquisition read answered so; C's two acquisitions both answer so at their create",
       expected="A and B succeed after a second create keyed :1; C fails CRAWLER_SESSION_EXPIRED after exactly "
                "two creates")
def _(ctx):
    plane = ctx.plane()
    a = plane.add_source(columns=COLUMNS, rows=ROWS, expire_once="create-document")
    b = plane.add_source(columns=COLUMNS, rows=ROWS, expire_once="read-document")
    c = plane.add_source(columns=COLUMNS, rows=ROWS, expire_acquisitions=2, expire_once="create-document")
    probes = {"A": plane.probe("source_inspect", a), "B": plane.probe("source_inspect", b),
              "C": plane.probe("source_inspect", c)}
    run_to_exit(plane, list(probes.values()))
    expect_summary(ctx, plane, terminal_state="closed")
    got = dict((label, _outcome(plane, p)) for label, p in probes.items())
    ctx.expect(got == {"A": ("succeeded", None), "B": ("succeeded", None),
                       "C": ("failed", "CRAWLER_SESSION_EXPIRED")},
               expected="A and B succeeded, C failed CRAWLER_SESSION_EXPIRED", actual="%s" % got,
               diagnosis="the upstream re-opens an acquisition whose settled document names CRAWLER_SESSION_EXPIRED "
                         "exactly as one refused so, once per probe")
    attempt = plane.control.binding["attempt_id"]
    for source, label in ((a, "A"), (b, "B"), (c, "C")):
        keys = [k.key for k in creates(plane, source.source_id)]
        wanted = ["session:%s:acquire:%s:%d" % (attempt, source.source_id, e) for e in (0, 1)]
        ctx.expect(keys == wanted, expected="%s: two creates, keyed :0 then :1" % label,
                   actual="keys ending %s" % [k.rsplit(":", 1)[-1] for k in keys],
                   diagnosis="an expiry raises the source's epoch: a new key, one more create, never a third")


@check("peer.bundle-csv", clauses=["SESSION-PEER-4"], level="MUST",
       title="a bundle as the upstream crawler stores a CSV source: its CSV text, the fetched media type, the "
             "Reader fields filled",
       fakes="the crawler result's normalized content is the CSV text itself (CRLF, quoted fields), its receipt "
             "says text/csv, names a Reader family, version, options digest, flags, caps and budgets; a probe of "
             "each kind",
       expected="every probe succeeds; each result's content_sha256 and content_bytes are the CSV text's, "
                "data_format csv, the relations of SESSION-PROBE-7 hold")
def _(ctx):
    rows = [["Oslo", "709037", ""], ["Bergen, Vestland", "291940", "port \"west\""], ["Trondheim", "212660", ""]]
    patch, content = upstream_csv(COLUMNS, rows)
    plane = ctx.plane()
    source = plane.add_source(columns=COLUMNS, rows=ROWS, data_format="csv", bundle_patch=patch)
    probes = _every_kind(plane, source, "the CSV source")
    run_to_exit(plane, [p for p, _k, _r in probes.values()])
    expect_summary(ctx, plane, terminal_state="closed")
    _expect_succeeded(ctx, plane, dict((label, p) for label, (p, _k, _r) in probes.items()),
                      "bytes whose digest and bindings hold are read, whatever media type and Reader produced them")
    _expect_bound(ctx, plane, probes, content, "csv", COLUMNS, rows)


@check("peer.bundle-forms", clauses=["SESSION-PEER-4"], level="MUST",
       title="bundles in the upstream crawler's other forms: a v1 result, members nobody defined, JSON lines "
             "of objects, a Reader's own row summary",
       fakes="one session; a source per form: a mostlyright-crawler-result.v1 result with the v1 receipt and "
             "observation; a result with a member nobody defined in every object; content of one JSON object "
             "per row (null cells absent); a receipt whose row_count and row_digest are not ours",
       expected="every probe succeeds, each result bound to its own bundle's content")
def _(ctx):
    plane = ctx.plane()
    objects_patch, objects = object_lines(COLUMNS, ROWS)
    forms = [("a v1 result", dict(bundle_patch=upstream_v1())),
             ("members nobody defined", dict(bundle_patch=bundle_members())),
             ("objects per line", dict(bundle_patch=objects_patch)),
             ("a Reader's row summary", dict(bundle_patch=_other_summary))]
    probes, contents = {}, {}
    for label, options in forms:
        source = plane.add_source(columns=COLUMNS, rows=ROWS, **options)
        for kind, request in (("sample_rows", {"limit": 3}), ("profile_columns", {})):
            probes["%s of %s" % (kind, label)] = (plane.probe(kind, source, **request), kind,
                                                  dict(request, source_id=source.source_id))
        contents[label] = objects if label == "objects per line" else source.bundle.content
    run_to_exit(plane, [p for p, _k, _r in probes.values()])
    expect_summary(ctx, plane, terminal_state="closed")
    _expect_succeeded(ctx, plane, dict((label, p) for label, (p, _k, _r) in probes.items()),
                      "a result the upstream crawler may store is read where its content can be read")
    for label, content in contents.items():
        mine = dict((name, value) for name, value in probes.items() if name.endswith(" of " + label))
        _expect_bound(ctx, plane, mine, content, "jsonl", COLUMNS, ROWS)


def _other_summary(doc):
    """The receipt's and observation's row summary as another Reader counts (the content stays ours)."""
    for part in (doc["acquisition_receipt"], doc["observation"]):
        part["row_count"] = 4
        part["row_digest"] = hashlib.sha256(b"another reader's rows").hexdigest()
    return doc


# peer.content-rows: JSON-lines contents (CRAWLER-RESULT-10) after the header ["k","v"]. A good
# one's every row holds in a form a producer may write; a bad one's row 26 breaks its form, after
# the rows a sample_rows probe's window (rows 0 to 2) reads, in a way one decode of the lines
# joined together could miss (D51).
CONTENT_HEADER = b'["k","v"]\n'
BROKEN_AFTER_ROWS = 25


def _content_rows(count, first=0):
    return b"".join(b'["r%d",%d]\n' % (i, i) for i in range(first, first + count))


CONTENT_GOOD = [  # (label, the rows after the header, their count)
    ("CRLF", _content_rows(4).replace(b"\n", b"\r\n"), 4),
    ("blank lines", b"\n" + _content_rows(2) + b"\n\n" + _content_rows(2, 2), 4),
    ("spaces around rows", b' ["a", 1] \n\t["b",2]\t\n', 2),
    ("brackets and escapes in strings", b'["],[","\\n]"]\n["[\\"x\\"]","\\\\"]\n["x",9007199254740991]\n', 3),
    ("a surrogate pair", b'["\\ud83d\\ude00",1]\n["b",2]\n', 2),
    ("no final newline", _content_rows(3).rstrip(b"\n"), 3),
]
CONTENT_BAD = [  # (label, the row that breaks its form)
    ("two rows on one line", b'["p",1],["q",2]\n'),
    ("a string over two lines, then two rows on one line", b'["a]\n[x",1]\n["p",1],["q",2]\n'),
    ("a row of another width", b'["x"]\n'),
    ("a nested array", b'[["x"],1]\n'),
    ("a lone surrogate", b'["\\ud800",1]\n'),
    ("minus zero", b'["z",-0]\n'),
    ("an integer past 2^53", b'["z",9007199254740992]\n'),
    ("a number out of range", b'["z",1e999]\n'),
]


@check("peer.content-rows", clauses=["SESSION-PEER-4"], level="MUST",
       title="every row of a content is read: one that breaks its form fails every probe of it, wherever it is",
       fakes="one session; JSON-lines contents whose rows hold in unusual forms (CRLF, blank lines, spaces, "
             "escapes, a surrogate pair, no final newline) and contents whose 26th row breaks its form in ways "
             "one decode of the joined lines could miss (two rows on a line, a string over two lines, a lone "
             "surrogate, -0, 2^53, a nested array); then two contents of one length, the second with its 28th "
             "row broken; sample_rows of rows the content holds",
       expected="each good content answered (its row count held to the window across its end); each broken "
                "one reported failed PROBE_PARSE_EMPTY although its window lies before the broken row, the "
                "second of one length too (a verdict is kept with the content's digest, never its length)")
def _(ctx):
    plane = ctx.plane()
    good, bad = {}, {}
    for label, rows, count in CONTENT_GOOD:
        source = plane.add_source(columns=["k", "v"], content=CONTENT_HEADER + rows)
        request = {"offset": max(0, count - 1), "limit": 5}
        good[label] = (plane.probe("sample_rows", source, **request), count, dict(request, source_id=source.source_id))
    for label, row in CONTENT_BAD:
        content = CONTENT_HEADER + _content_rows(BROKEN_AFTER_ROWS) + row + _content_rows(5, 100)
        bad[label] = plane.probe("sample_rows", plane.add_source(columns=["k", "v"], content=content), limit=2)
    whole = CONTENT_HEADER + _content_rows(30)
    broken = whole.replace(b'["r27",27]', b'["r27",[]]')  # the same length
    good["the first of one length"] = (plane.probe("sample_rows", plane.add_source(columns=["k", "v"], content=whole),
                                                   offset=29, limit=5), 30, None)
    bad["the second of one length"] = plane.probe("sample_rows", plane.add_source(columns=["k", "v"], content=broken),
                                                  limit=2)
    run_to_exit(plane, [p for p, _c, _r in good.values()] + list(bad.values()))
    expect_summary(ctx, plane, terminal_state="closed")
    _expect_succeeded(ctx, plane, dict((label, p) for label, (p, _c, _r) in good.items()),
                      "every row that holds is read as a row, whatever whitespace, line ends and escapes it has")
    wrong = []
    for label, (probe_id, count, request) in good.items():
        result = (first_report(plane, probe_id) or {}).get("result")
        if request is not None and isinstance(result, dict):
            wrong += ["%s: %s" % (label, p) for p in relation_problems(
                "sample_rows", request, result, ["k", "v"], [None] * count)[:1]]
    ctx.expect(not wrong, expected="each window across the end holds the content's last row",
               actual=lambda: "; ".join(wrong[:3]), diagnosis="the row count is the content's rows, blank lines not")
    refused = [label for label, probe_id in bad.items() if _outcome(plane, probe_id) != ("failed", "PROBE_PARSE_EMPTY")]
    ctx.expect(not refused, expected="every broken content failed PROBE_PARSE_EMPTY",
               actual=lambda: "; ".join("%s: %s/%s" % ((label,) + _outcome(plane, bad[label])) for label in refused[:4]),
               diagnosis="a content with a row that breaks its form is in none of the forms, whichever rows a probe "
                         "reads: read every row before the first answer, and keep that verdict with the digest of "
                         "the bytes it was read from (D51)")


@check("peer.statuses", clauses=["SESSION-PEER-5"], level="MUST",
       title="201 where the table writes 200, and 200 for a create: every success of the generated client",
       fakes="attempt:start, heartbeats, appends, claims, the report and the acquisition read answered 201; the "
             "acquisition create answered 200 (an idempotent replay)",
       expected="the probe succeeds; the session closes, exit 0; no call repeated for its status")
def _(ctx):
    statuses = {"start": 201, "heartbeat": 201, "append": 201, "claim": 201, "report": 201, "acquire": 200,
                "read": 201}
    plane = ctx.plane(statuses=statuses)
    source = plane.add_source(columns=COLUMNS, rows=ROWS, ready_after_reads=1)
    probe_id = plane.probe("sample_rows", source, limit=2)
    plane.start()
    plane.wait_report(probe_id)
    plane.wait_heartbeats(1)
    plane.close_session()
    plane.wait()
    expect_summary(ctx, plane, terminal_state="closed")
    _expect_succeeded(ctx, plane, {"sample_rows": probe_id}, "200 and 201 are each verb's success")
    reports = plane.control.reports(probe_id)
    ctx.expect(len(reports) == 1 and len(plane.control.calls("start")) == 1,
               expected="one attempt:start and one report", actual="%d start(s), %d report(s)" % (
                   len(plane.control.calls("start")), len(reports)),
               diagnosis="a 201 is the call's success: it is never sent again")


@check("peer.refusal-members", clauses=["SESSION-PEER-1"], level="MUST",
       title="refusal bodies with members nobody defined: the code still decides",
       fakes="refusal bodies carrying, besides code and detail, a fraction, 2^70 and a member nobody defined: "
             "the exchange 409 RESEARCH_SESSION_DISPATCH_CLOSED; the second claim 409 ATTEMPT_FENCE_STALE; an "
             "acquisition create 403 RESEARCH_SOURCE_FORBIDDEN (one per run)",
       expected="dispatch_consumed, exit 0; the session ends ATTEMPT_FENCE_STALE, exit 1; the probe reported "
                "failed RESEARCH_SOURCE_FORBIDDEN, the session closes")
def _(ctx):
    def closed(label, _value):
        plane = ctx.plane()
        plane.control.add_fault(faults.status(409, body=refusal_body("RESEARCH_SESSION_DISPATCH_CLOSED")),
                                plane.control.exchange_match())
        plane.run()
        expect_summary(ctx, plane, terminal_state="dispatch_consumed", variant=label)

    def fence(label, _value):
        plane = ctx.plane()
        plane.control.add_fault(faults.status(409, body=refusal_body("ATTEMPT_FENCE_STALE")),
                                plane.control.claim_match(skip=1, first=1))
        plane.run()
        expect_summary(ctx, plane, failure_code="ATTEMPT_FENCE_STALE", variant=label)

    def forbidden(label, _value):
        plane = ctx.plane()
        source = plane.add_source(columns=COLUMNS, rows=ROWS)
        plane.control.add_fault(faults.status(403, body=refusal_body("RESEARCH_SOURCE_FORBIDDEN")),
                                plane.control.acquisition_match())
        probe_id = plane.probe("source_inspect", source)
        run_to_exit(plane, [probe_id])
        expect_summary(ctx, plane, terminal_state="closed", variant=label)
        got = _outcome(plane, probe_id)
        ctx.expect(got == ("failed", "RESEARCH_SOURCE_FORBIDDEN"),
                   expected="the probe failed RESEARCH_SOURCE_FORBIDDEN (variant %s)" % label, actual="%s/%s" % got,
                   diagnosis="a refusal's code is read whatever else its body carries")
    each_variant(ctx, [("exchange", None)], closed)
    each_variant(ctx, [("claim", None)], fence)
    each_variant(ctx, [("create", None)], forbidden)


@check("peer.request-numbers", clauses=["SESSION-PEER-1"], level="MUST",
       title="a probe request's counts written as 3.0: read as 3",
       fakes="probes whose scan_rows, offset and limit are whole numbers written with a fraction (3.0, 1.0, 2.0)",
       expected="every probe succeeds; rows_scanned keeps to the counts as integers")
def _(ctx):
    plane = ctx.plane()
    source = plane.add_source(columns=COLUMNS, rows=ROWS)
    asked = [("sample_rows", {"offset": 1.0, "limit": 2.0}), ("profile_columns", {"scan_rows": 2.0}),
             ("source_inspect", {"scan_rows": 3.0})]
    probes = dict(("%s %s" % (kind, request), (plane.probe(kind, source, **request), kind,
                                               dict((k, int(v)) for k, v in request.items())))
                  for kind, request in asked)
    for probe_id, _kind, request in probes.values():
        request["source_id"] = source.source_id
    run_to_exit(plane, [p for p, _k, _r in probes.values()])
    _expect_succeeded(ctx, plane, dict((label, p) for label, (p, _k, _r) in probes.items()),
                      "a JSON producer may write a count as 3.0; it is the count 3")
    _expect_bound(ctx, plane, probes, source.bundle.content, "jsonl", COLUMNS, ROWS)


@check("peer.config-numbers", clauses=["SESSION-PEER-6", "SESSION-CONFIG-2"], level="MUST",
       title="configuration numbers as the upstream's float() and int() read them",
       fakes="MR_SESSION_WORKER_PROBE_TIMEOUT_SECONDS \"%s\", MR_SESSION_WORKER_ACQUISITION_TIMEOUT_SECONDS "
             "\"1e1\", MR_SESSION_WORKER_WARM_POOL_SIZE \"+1\", MR_SESSION_WORKER_SHUTDOWN_GRACE_SECONDS \"3_0\", "
             "PORT \" 8080\"; a probe" % PROBE_TIMEOUT_TEXT.strip(),
       expected="the run is admitted; the probe succeeds with the sandbox policy of a %.0f s probe timeout; the "
                "session closes, exit 0" % PROBE_TIMEOUT_S)
def _(ctx):
    plane = ctx.plane()
    source = plane.add_source(columns=COLUMNS, rows=ROWS)
    probe_id = plane.probe("source_inspect", source)
    run_to_exit(plane, [probe_id], env={"MR_SESSION_WORKER_PROBE_TIMEOUT_SECONDS": PROBE_TIMEOUT_TEXT,
                                        "MR_SESSION_WORKER_ACQUISITION_TIMEOUT_SECONDS": "1e1",
                                        "MR_SESSION_WORKER_WARM_POOL_SIZE": "+1",
                                        "MR_SESSION_WORKER_SHUTDOWN_GRACE_SECONDS": "3_0", "PORT": " 8080"})
    expect_summary(ctx, plane, terminal_state="closed")
    result = (first_report(plane, probe_id) or {}).get("result") or {}
    wanted = policy_digest(PROBE_TIMEOUT_S)
    ctx.expect(result.get("sandbox_policy_digest") == wanted,
               expected="a succeeded result under the policy of a %.0f s probe timeout" % PROBE_TIMEOUT_S,
               actual=lambda: "%s (%s)" % (result.get("sandbox_policy_digest"), describe_run(plane)),
               diagnosis="the upstream reads these with float() and int(): spaces, a sign, an exponent and "
                         "underscores are numbers there")
