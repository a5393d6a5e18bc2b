"""Fetch: CRAWLER-FETCH-1..8, the one source request the node makes under its egress policy.

Every check here gets past the bootstrap with a valid capability, so every
failure is reported by a failure bundle PUT through the capability
(CRAWLER-REPORT-2): status line ``{"code":X,"status":"reported"}``, exit 0,
the canonical bundle in the store. The plane's source site serves
``https://localhost:<port>``, and its default policy allows exactly that host,
that port and the addresses "localhost" resolves to.

What a check breaks is chosen so that a node skipping the rule would do
something visible instead: connect where it must not (the site's or the
tripwire's connection count), follow what it must not (a target that would
succeed), or read what it must not (a body that never ends or never comes).
Deadline checks lower MOSTLYRIGHT_CRAWLER_FETCH_TIMEOUT_S to SHORT_DEADLINE_S
and wait no longer than that plus DEADLINE_SLACK_S, so a node without the
deadline fails in seconds rather than holding the harness.

Where a check needs a policy the plane's defaults do not give (a port only
known once the plane's servers exist), it replaces ``plane.policy`` and
``plane.broker.attestation`` together before the run (`_use_policy`).
"""

import gzip
import socket

from conformance.checks import check
from conformance.checks.crawler._common import (
    DEADLINE_SLACK_S, ENDLESS_BYTES, SHORT_DEADLINE_S, SOCKET_SLACK_BYTES, docs, each_variant,
    expect_reported, expect_retrieval, expect_success, expect_untouched, faults)
from conformance.planes.crawler import DEFAULT_SOURCE

# Headers of every hop, exactly (CRAWLER-FETCH-4); Host is added per hop.
PLAIN_HEADERS = [("user-agent", docs.USER_AGENT), ("accept-encoding", "identity"), ("connection", "close")]

# A run that should end at the fetch deadline is given this long by the harness
# before it is killed: the bound asserted, plus this margin so that a node just
# over the bound is reported with its real duration rather than as killed.
KILL_MARGIN_S = 5.0
DEADLINE_RUN_TIMEOUT_S = SHORT_DEADLINE_S + DEADLINE_SLACK_S + KILL_MARGIN_S
# A source that drips this many bytes every interval never trips a per-read
# socket timeout, and would take minutes to deliver SLOW_SOURCE_BYTES.
DRIBBLE_CHUNK_BYTES = 8
DRIBBLE_INTERVAL_S = 0.2
SLOW_SOURCE_BYTES = 4096
# A capability window this long leaves about SHORT_DEADLINE_S + 1 s for the
# fetch once UPLOAD_RESERVE_S is kept back (CRAWLER-FETCH-7): the extra second
# covers X-Goog-Date's whole-second grain and the redemption-to-fetch gap on a
# loaded machine, which would otherwise leave no window at all.
SHORT_WINDOW_S = docs.UPLOAD_RESERVE_S + int(SHORT_DEADLINE_S) + 1

# max_source_bytes of the streamed-size check; the filler the site sends past
# the source without Content-Length is ENDLESS_BYTES (far more than the
# socket buffers hold, see _common), so a node that reads to the end is told
# apart from one that stops at the limit.
STREAM_LIMIT_BYTES = 1 << 20

# A CSV source long enough to be cut in the middle at a line boundary.
LONG_CSV_LINES = 2000

# The public fetch of the redirect chain of fetch.redirect-followed: the five
# redirect statuses, relative and absolute Locations, max_redirects hops.
CHAIN = [
    ("/chain/a/start", 302, "../b/hop2"),                 # relative, with a dot segment to resolve
    ("/chain/b/hop2", 301, "{origin}/chain/c/hop3"),      # absolute
    ("/chain/c/hop3", 303, "/chain/d/hop4"),              # absolute path
    ("/chain/d/hop4", 307, "hop5?step=5"),                # relative, with a query
    ("/chain/d/hop5?step=5", 308, "/data.csv"),
]

# What the evidence check serves: a Content-Type with parameters and case, an
# ETag with an ISO-8859-1 character, repeated (the first counts), a date.
EVIDENCE_CONTENT_TYPE = "Text/CSV; charset=utf-8"
EVIDENCE_ETAG = "W/\"caf\u00e9-17\""
EVIDENCE_SECOND_ETAG = "\"second\""
EVIDENCE_LAST_MODIFIED = "Tue, 01 Jan 2030 00:00:00 GMT"


# ---------------------------------------------------------------- arrangements

def _use_policy(plane, hosts=("localhost",), ports=None, addresses=None, max_redirects=5):
    """Give the node another egress policy, and the request the matching attestation."""
    default = plane.policy
    policy = docs.make_policy(list(hosts), [plane.site.port] if ports is None else list(ports),
                              default["allowed_addresses"] if addresses is None else list(addresses),
                              max_redirects)
    plane.policy = policy
    plane.broker.attestation = docs.digest(policy)
    return policy


def _closed_port():
    """A loopback port nothing listens on (bound, then released)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
    finally:
        sock.close()


def _long_csv():
    lines = [b"city,temp_c,observed\n"] + [b"City %05d,%d,2024-01-05\n" % (i, i % 40) for i in range(LONG_CSV_LINES)]
    return b"".join(lines), lines


def _limits(**changes):
    limits = docs.default_limits()
    limits.update(changes)
    return limits


def _source_connections(plane):
    return len(plane.site.connections)


def _expect_no_connection(ctx, plane, label, where="the source site"):
    site, tripwire = _source_connections(plane), len(plane.tripwire.connections)
    ctx.expect(site == 0 and tripwire == 0,
               expected="no connection to the source site or the tripwire (variant %s)" % label,
               actual="%d connection(s) to the site, %d to the tripwire; %s" % (site, tripwire,
                                                                               plane.describe_exchanges()),
               diagnosis="the node connected before (or despite) the check that must refuse %s" % where)


def _expect_hops(ctx, plane, targets, label):
    """The site saw exactly these request targets, one connection each (Connection: close)."""
    got = [hop.target for hop in plane.site.requests()]
    conns = _source_connections(plane)
    ctx.expect(got == list(targets) and conns == len(targets),
               expected="source requests %s on %d connection(s) (variant %s)" % (list(targets), len(targets), label),
               actual="source requests %s on %d connection(s); tripwire connections %d" % (
                   got, conns, len(plane.tripwire.connections)),
               diagnosis="the node contacted a target the contract does not let it contact, or stopped early")


def _expect_within(ctx, plane, bound_s, label, what):
    result = plane.result
    ctx.expect(not result.timed_out and result.wall_s is not None and result.wall_s <= bound_s,
               expected="the run ends within %.1f s (%s; variant %s)" % (bound_s, what, label),
               actual="it took %s%s" % ("%.1f s" % result.wall_s if result.wall_s is not None else "?",
                                        " and was killed by the harness" if result.timed_out else ""),
               diagnosis="the fetch deadline is an elapsed deadline for the whole fetch, not a per-read "
                         "socket timeout (D9)")


# ---------------------------------------------------------------- FETCH-1

@check("fetch.attestation", clauses=["CRAWLER-FETCH-1"], level="MUST",
       title="a request attesting another egress policy is refused before any connection to a source",
       fakes="the request's egress_policy_attestation is the digest of another valid policy (the "
             "capability's headers carry it consistently); the source itself would answer fine",
       expected="CRAWLER_EGRESS_POLICY_MISMATCH reported by bundle (exit 0); zero connections to the site")
def _(ctx):
    other = docs.make_policy(["data.example.org"], [443])
    plane = ctx.plane(attestation=docs.digest(other))
    plane.run()
    expect_reported(ctx, plane, "CRAWLER_EGRESS_POLICY_MISMATCH")
    _expect_no_connection(ctx, plane, "another policy's digest", "a request made under another policy")


# ---------------------------------------------------------------- FETCH-2

@check("fetch.url-invalid", clauses=["CRAWLER-FETCH-2"], level="MUST",
       title="the request's URL is checked against the policy before it is contacted",
       fakes="query.url breaking one rule each: http://, userinfo, a fragment, an IP literal, a host not "
             "in allowed_hosts, the tripwire's port, no port (443, not allowed); every one of them "
             "otherwise reaches a server that would answer",
       expected="each: CRAWLER_SOURCE_URL_INVALID reported by bundle; no connection to the site or the tripwire")
def _(ctx):
    def url(template, **policy):
        return template, policy

    variants = [
        ("http scheme", url("http://localhost:{site}/data.csv")),
        ("userinfo", url("https://crawler@localhost:{site}/data.csv")),
        ("a fragment", url("https://localhost:{site}/data.csv#top")),
        ("an IP literal", url("https://127.0.0.1:{site}/data.csv")),
        ("a host not in allowed_hosts", url("https://localhost:{site}/data.csv", hosts=["data.example.org"])),
        ("a port not in allowed_ports (the tripwire's)", url("https://localhost:{tripwire}/data.csv")),
        ("no port: 443 is not in allowed_ports", url("https://localhost/data.csv")),
    ]

    def act(label, value):
        template, policy = value
        plane = ctx.plane()
        if policy:
            _use_policy(plane, **policy)
        plane.broker.source_url = template.format(site=plane.site.port, tripwire=plane.tripwire.port)
        plane.run()
        expect_reported(ctx, plane, "CRAWLER_SOURCE_URL_INVALID", variant=label)
        _expect_no_connection(ctx, plane, label, "this URL")
    each_variant(ctx, variants, act)


# ---------------------------------------------------------------- FETCH-3

@check("fetch.private-address", clauses=["CRAWLER-FETCH-3"], level="MUST",
       title="a host resolving to a non-public address not in allowed_addresses is not contacted",
       fakes="the source is https://localhost:<port> (127.0.0.1); the policy allows the host and the "
             "port but not the address: allowed_addresses empty, or holding 127.0.0.2 only",
       expected="each: CRAWLER_EGRESS_DENIED reported by bundle; no connection to the site")
def _(ctx):
    variants = [("no allowed_addresses", []), ("only 127.0.0.2 allowed", ["127.0.0.2"])]

    def act(label, addresses):
        plane = ctx.plane()
        _use_policy(plane, addresses=addresses)
        plane.run()
        expect_reported(ctx, plane, "CRAWLER_EGRESS_DENIED", variant=label)
        _expect_no_connection(ctx, plane, label, "a loopback address")
    each_variant(ctx, variants, act)


# ---------------------------------------------------------------- FETCH-4

@check("fetch.plain-request", clauses=["CRAWLER-FETCH-4", "CRAWLER-FETCH-3"], level="MUST",
       title="every hop is a GET with exactly Host, User-Agent, Accept-Encoding: identity, Connection: close",
       fakes="the source URL answers 302 to /data.csv, which answers the CSV",
       expected="a successful run; both requests GET with exactly the headers Host: localhost:<port>, "
                "User-Agent: mostlyright-crawler/1, Accept-Encoding: identity, Connection: close")
def _(ctx):
    plane = ctx.plane()
    plane.site.redirect("/plain/start", "/data.csv", 302)
    plane.broker.source_url = plane.site.url("/plain/start")
    plane.run()
    expect_success(ctx, plane)
    hops = plane.site.requests()
    ctx.expect([hop.target for hop in hops] == ["/plain/start", "/data.csv"],
               expected="two source requests, /plain/start then /data.csv",
               actual="targets %s" % [hop.target for hop in hops],
               diagnosis="follow the source's redirect by hand, one GET per hop, to the Location it names and nothing "
                         "more")
    want = sorted([("host", "localhost:%d" % plane.site.port)] + PLAIN_HEADERS)
    for hop in hops:
        got = sorted((name.lower(), value) for name, value in hop.exchange.headers)
        ctx.expect(hop.exchange.method == "GET" and got == want,
                   expected="GET %s with exactly the headers %s" % (hop.target, want),
                   actual="%s %s with the headers %s" % (hop.exchange.method, hop.target, got),
                   diagnosis="a source sees Host (the name it is reached by), the User-Agent, "
                             "Accept-Encoding: identity and Connection: close, and nothing else: no "
                             "credential, cookie, Referer, session id or execution id")


# ---------------------------------------------------------------- FETCH-5

@check("fetch.redirect-followed", clauses=["CRAWLER-FETCH-5"], level="MUST",
       title="redirects are followed by hand: the five statuses, relative and absolute, max_redirects of them",
       fakes="a chain of exactly max_redirects (5) hops on the site: 302 ../b/hop2, 301 absolute URL, "
             "303 /absolute/path, 307 relative with a query, 308 to /data.csv, which answers the CSV",
       expected="a successful run; the site saw the six targets in order; the receipt's source_url is the "
                "first URL and final_url the last")
def _(ctx):
    plane = ctx.plane()
    origin = plane.site.url("").rstrip("/")
    for path, status, location in CHAIN:
        plane.site.redirect(path, location.format(origin=origin), status)
    plane.broker.source_url = plane.site.url(CHAIN[0][0])
    plane.run()
    expect_success(ctx, plane)
    targets = [path for path, _status, _location in CHAIN] + ["/data.csv"]
    _expect_hops(ctx, plane, targets, "the redirect chain")
    receipt = plane.stored_result().doc["acquisition_receipt"]
    want = (plane.site.url(CHAIN[0][0]), plane.site.url("/data.csv"))
    got = (receipt.get("source_url"), receipt.get("final_url"))
    ctx.expect(got == want, expected="source_url, final_url = %s" % (want,), actual="%s" % (got,),
               diagnosis="final_url is the last hop's URL, each Location resolved with urljoin")


@check("fetch.redirect-denied", clauses=["CRAWLER-FETCH-5", "CRAWLER-FETCH-2"], level="MUST",
       title="a redirect outside the policy, without Location, or past max_redirects is not followed",
       fakes="/data.csv answers 302 to: the tripwire's port, http://, https://169.254.169.254/, userinfo, "
             "a fragment, a URL over 2048 characters; or 302, 300 and 304 without Location; or a chain of "
             "max_redirects + 1 (6) redirects that would end at the CSV. Fetch timeout 2 s.",
       expected="each: CRAWLER_SOURCE_REDIRECT_DENIED reported by bundle; the site saw only the hops "
                "before the refused one (one connection each); the tripwire nothing")
def _(ctx):
    def one(location, status=302):
        return [("/data.csv", status, location)]

    too_many = [("/many/%d" % i, 302, "/many/%d" % (i + 1)) for i in range(1, 6)] + [("/many/6", 302, "/data.csv")]
    variants = [
        ("to the tripwire's port", one("https://localhost:{tripwire}/data.csv")),
        ("to http://", one("http://localhost:{site}/data.csv")),
        ("to 169.254.169.254", one("https://169.254.169.254/data.csv")),
        ("to a URL with userinfo", one("https://crawler@localhost:{site}/data.csv")),
        ("to a URL with a fragment", one("https://localhost:{site}/data.csv#top")),
        ("to a URL over 2048 characters", one("/data.csv?pad=" + "p" * 2048)),
        ("302 without Location", one(None)),
        ("300 without Location", one(None, 300)),
        ("304 without Location", one(None, 304)),
        ("max_redirects + 1 redirects", too_many),
    ]

    def act(label, chain):
        plane = ctx.plane(timeouts={"fetch": SHORT_DEADLINE_S})
        for path, status, location in chain:
            if location is not None:
                location = location.format(site=plane.site.port, tripwire=plane.tripwire.port)
            plane.site.redirect(path, location, status)
        plane.broker.source_url = plane.site.url(chain[0][0])
        plane.run(timeout=DEADLINE_RUN_TIMEOUT_S)
        expect_reported(ctx, plane, "CRAWLER_SOURCE_REDIRECT_DENIED", variant=label)
        _expect_hops(ctx, plane, [path for path, _s, _l in chain], label)
    each_variant(ctx, variants, act)


# ---------------------------------------------------------------- FETCH-6

@check("fetch.status", clauses=["CRAWLER-FETCH-6"], level="MUST",
       title="the final hop must answer 200",
       fakes="/data.csv answers the valid CSV with status 404, or 206; or 300 with a Location to a "
             "path that answers 200 (300 is not one of the redirects followed)",
       expected="each: CRAWLER_SOURCE_HTTP_STATUS reported by bundle; one source request")
def _(ctx):
    variants = [("404 with a CSV body", (404, None)), ("206 with a CSV body", (206, None)),
                ("300 with a Location", (300, "/elsewhere.csv"))]

    def act(label, value):
        status, location = value
        plane = ctx.plane()
        headers = [("Location", location)] if location else []
        plane.site.serve("/data.csv", DEFAULT_SOURCE, content_type="text/csv", status=status, headers=headers)
        plane.site.serve("/elsewhere.csv", DEFAULT_SOURCE, content_type="text/csv")
        plane.run()
        expect_reported(ctx, plane, "CRAWLER_SOURCE_HTTP_STATUS", variant=label)
        _expect_hops(ctx, plane, ["/data.csv"], label)
    each_variant(ctx, variants, act)


@check("fetch.encoding", clauses=["CRAWLER-FETCH-6"], level="MUST",
       title="a Content-Encoding other than identity is refused and nothing is decoded",
       fakes="the CSV served with Content-Encoding: gzip, once as plain bytes (a node ignoring the header "
             "would succeed) and once gzip-compressed (a node decoding it would succeed); then with "
             "Content-Encoding: identity",
       expected="gzip: CRAWLER_SOURCE_ENCODING_UNSUPPORTED reported by bundle, each time; identity: a "
                "successful run")
def _(ctx):
    variants = [("gzip header, plain body", ("gzip", DEFAULT_SOURCE)),
                ("gzip header, gzip body", ("gzip", gzip.compress(DEFAULT_SOURCE, mtime=0))),
                ("identity", ("identity", DEFAULT_SOURCE))]

    def act(label, value):
        encoding, body = value
        plane = ctx.plane(source=body, source_headers=[("Content-Encoding", encoding)])
        plane.run()
        if encoding == "identity":
            expect_success(ctx, plane)
        else:
            expect_reported(ctx, plane, "CRAWLER_SOURCE_ENCODING_UNSUPPORTED", variant=label)
    each_variant(ctx, variants, act)


@check("fetch.too-large-declared", clauses=["CRAWLER-FETCH-6"], level="MUST",
       title="a Content-Length above max_source_bytes is refused before the body is read",
       fakes="max_source_bytes one byte under the CSV's Content-Length, and the site sends the headers "
             "but no body byte (a node reading first waits for the fetch timeout, 2 s); then "
             "max_source_bytes equal to it, no fault",
       expected="over: CRAWLER_SOURCE_TOO_LARGE reported by bundle, not SOURCE_TIMEOUT; equal: a "
                "successful run")
def _(ctx):
    size = len(DEFAULT_SOURCE)
    variants = [("Content-Length one over the limit, body withheld", (size - 1, faults.stall(after_bytes=0))),
                ("Content-Length equal to the limit", (size, None))]

    def act(label, value):
        limit, fault = value
        plane = ctx.plane(limits=_limits(max_source_bytes=limit), timeouts={"fetch": SHORT_DEADLINE_S})
        if fault is not None:
            plane.site.add_fault(fault, plane.site.source_match())
        plane.run(timeout=DEADLINE_RUN_TIMEOUT_S)
        if fault is not None:
            expect_reported(ctx, plane, "CRAWLER_SOURCE_TOO_LARGE", variant=label)
        else:
            expect_success(ctx, plane)
    each_variant(ctx, variants, act)


@check("fetch.too-large-streamed", clauses=["CRAWLER-FETCH-6"], level="MUST",
       title="without Content-Length, reading stops at max_source_bytes + 1",
       fakes="max_source_bytes 1 MiB; the site answers without Content-Length and sends the CSV, then twice "
             "what the machine's socket buffers can hold and more",
       expected="CRAWLER_SOURCE_TOO_LARGE reported by bundle, and the site could write no more than the "
                "limit plus the socket buffers")
def _(ctx):
    plane = ctx.plane(limits=_limits(max_source_bytes=STREAM_LIMIT_BYTES))
    plane.site.add_fault(faults.oversize(ENDLESS_BYTES, content_length="absent"), plane.site.source_match())
    plane.run()
    expect_reported(ctx, plane, "CRAWLER_SOURCE_TOO_LARGE")
    sent = max([hop.exchange.resp_bytes for hop in plane.site.requests()] or [0])
    ctx.note("the site wrote %d body bytes before the node stopped reading" % sent)
    ctx.expect(sent <= STREAM_LIMIT_BYTES + SOCKET_SLACK_BYTES,
               expected="the site wrote at most %d bytes (the limit plus socket buffers)"
                        % (STREAM_LIMIT_BYTES + SOCKET_SLACK_BYTES),
               actual="the site wrote %d bytes of a %d-byte body" % (
                   sent, len(DEFAULT_SOURCE) + ENDLESS_BYTES),
               diagnosis="the node read on past max_source_bytes + 1 instead of stopping there")


@check("fetch.truncated", clauses=["CRAWLER-FETCH-6"], level="MUST",
       title="a body shorter than its Content-Length is CRAWLER_SOURCE_UNAVAILABLE",
       fakes="a 2001-line CSV whose answer the site closes cleanly at a line boundary halfway through "
             "(what arrived is valid CSV on its own)",
       expected="CRAWLER_SOURCE_UNAVAILABLE reported by bundle")
def _(ctx):
    body, lines = _long_csv()
    cut = len(b"".join(lines[:len(lines) // 2]))
    plane = ctx.plane(source=body)
    plane.site.add_fault(faults.truncate(after_bytes=cut), plane.site.source_match())
    plane.run()
    expect_reported(ctx, plane, "CRAWLER_SOURCE_UNAVAILABLE")


# ---------------------------------------------------------------- FETCH-7

@check("fetch.deadline", clauses=["CRAWLER-FETCH-7"], level="MUST",
       title="one elapsed deadline for the whole fetch, shortened to keep UPLOAD_RESERVE_S of the window",
       fakes="the site drips its answer (headers included) 8 bytes every 0.2 s; fetch timeout 2 s; then "
             "the default fetch timeout with a capability window of UPLOAD_RESERVE_S + 2 s",
       expected="each: CRAWLER_SOURCE_TIMEOUT reported by bundle, the run over within 2 + 4 s")
def _(ctx):
    drip = faults.dribble(DRIBBLE_CHUNK_BYTES, DRIBBLE_INTERVAL_S)
    slow = bytes(DEFAULT_SOURCE * (SLOW_SOURCE_BYTES // len(DEFAULT_SOURCE) + 1))[:SLOW_SOURCE_BYTES]
    variants = [
        ("fetch timeout 2 s", {"timeouts": {"fetch": SHORT_DEADLINE_S}}),
        ("window of UPLOAD_RESERVE_S + 3 s", {"url_expires_s": SHORT_WINDOW_S}),
    ]

    def act(label, options):
        plane = ctx.plane(source=slow, **options)
        plane.site.add_fault(drip, plane.site.source_match())
        plane.run(timeout=DEADLINE_RUN_TIMEOUT_S)
        _expect_within(ctx, plane, SHORT_DEADLINE_S + DEADLINE_SLACK_S, label, "a drip past the fetch deadline")
        expect_reported(ctx, plane, "CRAWLER_SOURCE_TIMEOUT", variant=label)
    each_variant(ctx, variants, act)


@check("fetch.reset", clauses=["CRAWLER-FETCH-7"], level="MUST",
       title="a reset or refused connection is CRAWLER_SOURCE_UNAVAILABLE",
       fakes="the site resets the connection after 1000 body bytes; resets it before answering; or the "
             "URL names an allowed port nothing listens on",
       expected="each: CRAWLER_SOURCE_UNAVAILABLE reported by bundle")
def _(ctx):
    body, _lines = _long_csv()
    variants = [("reset after 1000 body bytes", (faults.reset(after_bytes=1000), {})),
                ("reset before the answer", (faults.reset(after_bytes=0), {"phase": "request"})),
                ("connection refused", None)]

    def act(label, value):
        plane = ctx.plane(source=body)
        if value is not None:
            fault, match = value
            plane.site.add_fault(fault, plane.site.source_match(**match))
        else:
            port = _closed_port()
            _use_policy(plane, ports=[plane.site.port, port])
            plane.broker.source_url = "https://localhost:%d/data.csv" % port
        plane.run()
        expect_reported(ctx, plane, "CRAWLER_SOURCE_UNAVAILABLE", variant=label)
    each_variant(ctx, variants, act)


# ---------------------------------------------------------------- FETCH-8

@check("fetch.evidence", clauses=["CRAWLER-FETCH-8"], level="MUST",
       title="the node's own account of the fetch: hashes, size, URLs, media type, status, ETag, Last-Modified",
       fakes="the source URL answers 302 to /data.csv, served with Content-Type \"Text/CSV; charset=utf-8\", "
             "an ETag with an ISO-8859-1 character followed by a second ETag, and a Last-Modified; a "
             "scripted child records the normalisation input it is given",
       expected="the child's header.retrieval equals the harness's: raw SHA-256 and size of the bytes "
                "served, final_url the last hop, media_type \"text/csv\", status 200, the first ETag and "
                "the Last-Modified as served, and the digest of the harness's transport evidence")
def _(ctx):
    plane = ctx.plane(source_content_type=EVIDENCE_CONTENT_TYPE, source_etag=EVIDENCE_ETAG,
                      source_last_modified=EVIDENCE_LAST_MODIFIED,
                      source_headers=[("ETag", EVIDENCE_SECOND_ETAG)], child={"mode": "normal"})
    plane.site.redirect("/evidence/start", "/data.csv", 302)
    plane.broker.source_url = plane.site.url("/evidence/start")
    plane.run()
    expect_success(ctx, plane)
    expect_retrieval(ctx, plane)


@check("fetch.tls-verified", clauses=["CRAWLER-FETCH-3"], level="MUST",
       title="the source is read only over TLS whose certificate verifies for the host name",
       fakes="the source site serves a self-signed certificate for localhost, trusted by nobody",
       expected="CRAWLER_SOURCE_UNAVAILABLE reported in a bundle, exit 0; the site never receives a request")
def _(ctx):
    # Arrange
    plane = ctx.plane(untrusted=("site",))
    # Act
    plane.run()
    # Assert
    expect_reported(ctx, plane, "CRAWLER_SOURCE_UNAVAILABLE")
    expect_untouched(ctx, plane, ("source",))


@check("fetch.tls-hostname", clauses=["CRAWLER-FETCH-3"], level="MUST",
       title="the source is refused when its certificate verifies but names another host",
       fakes="the source site serves a certificate whose chain the node trusts but which names only "
             "misnamed.invalid",
       expected="CRAWLER_SOURCE_UNAVAILABLE reported in a bundle, exit 0; the site never receives a request")
def _(ctx):
    # Arrange
    plane = ctx.plane(misnamed=("site",))
    # Act
    plane.run()
    # Assert
    expect_reported(ctx, plane, "CRAWLER_SOURCE_UNAVAILABLE")
    expect_untouched(ctx, plane, ("source",))
