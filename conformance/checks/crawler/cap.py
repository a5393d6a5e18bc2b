"""Upload capability: CRAWLER-CAP-1..9, each rule of the capability in the order given.

Every check here starts from a capability the plane built and the store signed
properly, then breaks exactly one thing in it (``capability_patch``) or in the
way the plane dates it (``url_issued_offset_s``, ``expires_in_s``). Where the
contract allows it, the broken capability is one a node skipping the rule
would happily use: it would fetch the source and PUT (and the store might
even accept), so the check fails on an outcome, not on a coincidence.

What every refusal here must look like (CRAWLER-CAP-*, CRAWLER-REPORT-1):
``{"code":"CRAWLER_UPLOAD_CAPABILITY_INVALID","status":"failed"}`` (or
``..._EXPIRED``), exit 1, stderr-only: no ``:fail``, no source request, no PUT.
The one exception is CAP-9, a capability for another session, which is
``CRAWLER_BOOTSTRAP_RESPONSE_INVALID`` reported on ``:fail``.

Order matters (CRAWLER-CAP-4: expiry after CAP-1..3 and before CAP-5..9;
CRAWLER-CAP-9 after CAP-1..8): cap.expired combines an expired capability with
faults on either side of it.
"""

import time
import urllib.parse

from conformance.checks import check
from conformance.checks.crawler._common import (
    SESSION_ID, docs, each_variant, expect_outcome, expect_success, expect_untouched)

INVALID = "CRAWLER_UPLOAD_CAPABILITY_INVALID"
EXPIRED = "CRAWLER_UPLOAD_CAPABILITY_EXPIRED"
RESPONSE_INVALID = "CRAWLER_BOOTSTRAP_RESPONSE_INVALID"

# The plane signs the upload URL for this long (X-Goog-Expires) by default.
URL_EXPIRES_S = 900
# A mis-spelled expires_at names this instant (from the redemption): inside
# the URL's own expiry, so a node that parsed the spelling leniently would
# find the window consistent (CRAWLER-CAP-8) and go on.
EXPIRES_AHEAD_S = 600
# expires_at this far in the past: clear of the timestamp's one-second grain.
EXPIRED_AGO_S = 60
# X-Goog-Date this far ahead is beyond CLOCK_SKEW_S (300) by a margin no clock
# jitter covers, yet within the store's own 15-minute tolerance.
BEYOND_SKEW_S = docs.CLOCK_SKEW_S + 100
# ... and this far ahead is within CLOCK_SKEW_S: accepted.
WITHIN_SKEW_S = docs.CLOCK_SKEW_S - 100
# X-Goog-Date an hour ahead (the plan's first window variant).
ONE_HOUR_S = 3600
# For X-Goog-Expires=0 to be the only fault, the URL is dated this far ahead
# and expires_at lies this far ahead: the window stays consistent (CAP-8)
# whatever a lenient node makes of the 0.
ZERO_EXPIRES_DATE_AHEAD_S = 200
ZERO_EXPIRES_AT_AHEAD_S = 100
# The largest X-Goog-Expires CRAWLER-CAP-6 accepts.
MAX_URL_EXPIRES_S = 2100
# The longest upload URL CRAWLER-CAP-5 accepts.
MAX_UPLOAD_URL_CHARS = 16384

# Another canonical UUID than the run's session (CRAWLER-CAP-9).
OTHER_SESSION_ID = "9b1d6f0a-2c4e-4a8b-8f3d-5e7c1a2b4d60"
NIL_SESSION_ID = "00000000-0000-0000-0000-000000000000"


# ---------------------------------------------------------------- capability patches

def _set(key, value):
    """A capability_patch that sets one key."""
    def patch(cap):
        cap[key] = value
    return patch


def _drop(key):
    def patch(cap):
        del cap[key]
    return patch


def _expires_spelled(fmt, ahead_s=EXPIRES_AHEAD_S):
    """expires_at = now + ahead_s written with strftime format fmt (UTC), at the redemption."""
    def patch(cap):
        cap["expires_at"] = time.strftime(fmt, time.gmtime(time.time() + ahead_s))
    return patch


def _expires_number(cap):
    cap["expires_at"] = int(time.time()) + EXPIRES_AHEAD_S


def _other_request_digest():
    """The digest of a real crawl request, just not the one served."""
    return docs.digest(docs.make_request("https://example.org/other.csv", "0" * 64))


def _url(edit):
    """A capability_patch that rewrites upload_url with edit(origin, path, query) -> url."""
    def patch(cap):
        split = urllib.parse.urlsplit(cap["upload_url"])
        origin = "%s://%s" % (split.scheme, split.netloc)
        cap["upload_url"] = edit(origin, split.path, split.query)
    return patch


def _path_parts(path):
    """(bucket, object hex) of /<bucket>/crawler-quarantine/v2/<hex>."""
    bucket, _, rest = path[1:].partition("/")
    return bucket, rest[len(docs.RESULT_PREFIX):]


def _query(edit):
    """A capability_patch that rewrites the query's raw fields ("name=value", as sent)."""
    def patch(cap):
        base, _, query = cap["upload_url"].partition("?")
        cap["upload_url"] = base + "?" + "&".join(edit(query.split("&")))
    return patch


def _field_value(fields, name):
    for item in fields:
        if item.partition("=")[0] == name:
            return urllib.parse.unquote(item.partition("=")[2])
    raise KeyError(name)


def _field(name, value_of):
    """Replace field name's value by value_of(decoded old value), percent-encoded."""
    def edit(fields):
        new = urllib.parse.quote(value_of(_field_value(fields, name)), safe="")
        return ["%s=%s" % (name, new) if item.partition("=")[0] == name else item for item in fields]
    return _query(edit)


def _swap_signed_headers(names):
    names = list(names)
    names[0], names[1] = names[1], names[0]
    return names


def _headers(edit):
    """A capability_patch that rewrites the required_headers list in place via edit(list)."""
    def patch(cap):
        edited = edit(cap["required_headers"])
        if edited is not None:
            cap["required_headers"] = edited
    return patch


def _header_value(index, value):
    def edit(headers):
        headers[index]["value"] = value
    return _headers(edit)


# ---------------------------------------------------------------- assertions

def _expect_stderr_only(ctx, plane, code, label):
    """The capability was refused with code, stderr-only: no :fail, no fetch, no PUT."""
    expect_outcome(ctx, plane, code, "failed", 1, variant=label)
    expect_untouched(ctx, plane, ("fail", "source", "put", "tripwire"), variant=label)


def _refusals(ctx, variants, code=INVALID):
    """Run each (label, plane options) variant; each must end refused with code, stderr-only."""
    def act(label, options):
        plane = ctx.plane(**options)
        plane.run()
        _expect_stderr_only(ctx, plane, code, label)
    each_variant(ctx, variants, act)


# ---------------------------------------------------------------- CAP-1

@check("cap.keys-constants", clauses=["CRAWLER-CAP-1"], level="MUST",
       title="the capability has exactly its ten keys and its constants, case and type included",
       fakes="a signed capability with one key added or removed, or one constant changed: method "
             "\"put\", redirect_policy \"follow\", single_use 1 or \"true\", max_result_bytes true or "
             "another integer, schema v2; or an array instead of an object",
       expected="each: {\"code\":\"CRAWLER_UPLOAD_CAPABILITY_INVALID\",\"status\":\"failed\"}, exit 1; "
                "no :fail, no source request, no PUT")
def _(ctx):
    variants = [
        ("extra key", {"capability_patch": _set("upload_method", "PUT")}),
        ("missing key redirect_policy", {"capability_patch": _drop("redirect_policy")}),
        ("method \"put\"", {"capability_patch": _set("method", "put")}),
        ("redirect_policy \"follow\"", {"capability_patch": _set("redirect_policy", "follow")}),
        ("single_use 1", {"capability_patch": _set("single_use", 1)}),
        ("single_use \"true\"", {"capability_patch": _set("single_use", "true")}),
        ("max_result_bytes true", {"capability_patch": _set("max_result_bytes", True)}),
        ("max_result_bytes twice the bound",
         {"capability_patch": _set("max_result_bytes", 2 * docs.MAX_CRAWLER_RESULT_BYTES)}),
        ("schema_version v2", {"capability_patch": _set(
            "schema_version", docs.CAPABILITY_SCHEMA.replace(".v1", ".v2"))}),
        ("an array instead of an object", {"capability_patch": lambda cap: [cap]}),
    ]
    _refusals(ctx, variants)


# ---------------------------------------------------------------- CAP-2

@check("cap.digest-binding", clauses=["CRAWLER-CAP-2"], level="MUST",
       title="request_digest is 64 lowercase hex and the digest of the request served with it",
       fakes="the capability's request_digest uppercased, cut to 63 characters, or another request's "
             "digest (the signed headers still name the served request's digest)",
       expected="each: CRAWLER_UPLOAD_CAPABILITY_INVALID failed, exit 1; no :fail, no source request, no PUT")
def _(ctx):
    variants = [
        ("uppercase", {"capability_patch": lambda cap: cap.update(request_digest=cap["request_digest"].upper())}),
        ("63 characters", {"capability_patch": lambda cap: cap.update(request_digest=cap["request_digest"][:63])}),
        ("another request's digest", {"capability_patch": _set("request_digest", _other_request_digest())}),
    ]
    _refusals(ctx, variants)


# ---------------------------------------------------------------- CAP-3

@check("cap.forms", clauses=["CRAWLER-CAP-3"], level="MUST",
       title="the capability's session is a canonical UUID and expires_at a canonical UTC timestamp",
       fakes="crawler_session_id uppercased; expires_at (10 min ahead unless said) spelled with +00:00, "
             "a lowercase z, a space for T, no seconds, a 7-digit fraction, second 60, as a number; "
             "February 30 and year 0000 (in the past, so a lenient parser says EXPIRED instead)",
       expected="each: CRAWLER_UPLOAD_CAPABILITY_INVALID failed, exit 1 (not CAP-9's :fail, not EXPIRED); "
                "no :fail, no source request, no PUT")
def _(ctx):
    variants = [
        ("crawler_session_id uppercase", {"capability_patch": _set("crawler_session_id", SESSION_ID.upper())}),
        ("expires_at with +00:00", {"capability_patch": _expires_spelled("%Y-%m-%dT%H:%M:%S+00:00")}),
        ("expires_at with a lowercase z", {"capability_patch": _expires_spelled("%Y-%m-%dT%H:%M:%Sz")}),
        ("expires_at with a space for T", {"capability_patch": _expires_spelled("%Y-%m-%d %H:%M:%SZ")}),
        ("expires_at without seconds", {"capability_patch": _expires_spelled("%Y-%m-%dT%H:%MZ")}),
        ("expires_at with a 7-digit fraction", {"capability_patch": _expires_spelled("%Y-%m-%dT%H:%M:%S.1234567Z")}),
        ("expires_at at second 60", {"capability_patch": _expires_spelled("%Y-%m-%dT%H:%M:60Z")}),
        ("expires_at as a number", {"capability_patch": _expires_number}),
        ("expires_at on February 30", {"capability_patch": _set("expires_at", "2024-02-30T00:00:00Z")}),
        ("expires_at in year 0000", {"capability_patch": _set("expires_at", "0000-01-01T00:00:00Z")}),
    ]
    _refusals(ctx, variants)


# ---------------------------------------------------------------- CAP-4

@check("cap.expired", clauses=["CRAWLER-CAP-4", "CRAWLER-CAP-1", "CRAWLER-CAP-9"], level="MUST",
       title="an expired capability is CRAWLER_UPLOAD_CAPABILITY_EXPIRED, checked after CAP-1..3 and "
             "before CAP-5..9",
       fakes="expires_at 60 s before the redemption; alone, with an upload URL on another host, with a "
             "capability for another session, with an extra key, with an uppercase request_digest; and, "
             "not expired, a capability for another session whose URL names another host",
       expected="expired alone, with the bad URL, with the other session: "
                "{\"code\":\"CRAWLER_UPLOAD_CAPABILITY_EXPIRED\",\"status\":\"failed\"}, exit 1, no :fail; "
                "with the extra key: CRAWLER_UPLOAD_CAPABILITY_INVALID; never a source request or a PUT")
def _(ctx):
    past = {"expires_in_s": -EXPIRED_AGO_S}
    other_host = _url(lambda origin, path, query: origin.replace("127.0.0.1", "localhost") + path + "?" + query)
    variants = [
        ("expired", EXPIRED, past),
        ("expired, upload URL on another host (CAP-5 comes after)", EXPIRED,
         dict(past, capability_patch=other_host)),
        ("expired, capability for another session (CAP-9 comes after)", EXPIRED,
         dict(past, capability_patch=_set("crawler_session_id", OTHER_SESSION_ID))),
        ("expired, an extra key (CAP-1 comes first)", INVALID,
         dict(past, capability_patch=_set("upload_method", "PUT"))),
        ("expired, request_digest in uppercase (CAP-2 comes first)", INVALID,
         dict(past, capability_patch=lambda cap: cap.update(request_digest=cap["request_digest"].upper()))),
        ("not expired, another session and an upload URL on another host (CAP-9 comes after CAP-5)", INVALID,
         {"capability_patch": lambda cap: (other_host(cap), cap.update(crawler_session_id=OTHER_SESSION_ID))}),
    ]

    def act(label, value):
        code, options = value
        plane = ctx.plane(**options)
        plane.run()
        _expect_stderr_only(ctx, plane, code, label)
    each_variant(ctx, [(label, (code, options)) for label, code, options in variants], act)


# ---------------------------------------------------------------- CAP-5

@check("cap.url", clauses=["CRAWLER-CAP-5"], level="MUST",
       title="the upload URL is printable ASCII on the storage origin, under /<bucket>/crawler-quarantine/v2/",
       fakes="the signed URL with http, another host name for the same server, the tripwire's port, "
             "userinfo, a fragment, more than 16384 characters, a space, CR LF or a non-ASCII character "
             "in the query, another bucket, the v1 prefix, an extra segment, a 63- or 65-character or "
             "uppercase object name, %2F, a dot segment",
       expected="each: CRAWLER_UPLOAD_CAPABILITY_INVALID failed, exit 1; no :fail, no source request, "
                "no PUT, no connection to the tripwire")
def _(ctx):
    holder = {}

    def tripwire_port(origin, path, query):
        return holder["plane"].tripwire.url(path) + "?" + query

    def long_url(origin, path, query):
        # X-Goog-Credential is free text to the node: padding it keeps every other rule
        # intact, and makes the whole URL (not just its query) one character too long.
        head = origin + path + "?"
        pad = MAX_UPLOAD_URL_CHARS + 1 - len(head) - len(query)
        fields = [item + "x" * pad if item.startswith("X-Goog-Credential=") else item for item in query.split("&")]
        url = head + "&".join(fields)
        assert len(url) == MAX_UPLOAD_URL_CHARS + 1, len(url)
        return url

    def in_query(text):
        return _query(lambda fields: [item + text if item.startswith("X-Goog-Credential=") else item
                                      for item in fields])

    def path(make):
        def edit(origin, path, query):
            bucket, name = _path_parts(path)
            return origin + make(bucket, name) + "?" + query
        return _url(edit)

    prefix = docs.RESULT_PREFIX
    variants = [
        ("http scheme", _url(lambda o, p, q: o.replace("https://", "http://") + p + "?" + q)),
        ("another host name (localhost for 127.0.0.1)",
         _url(lambda o, p, q: o.replace("127.0.0.1", "localhost") + p + "?" + q)),
        ("another port (the tripwire's)", _url(tripwire_port)),
        ("userinfo", _url(lambda o, p, q: o.replace("https://", "https://crawler@") + p + "?" + q)),
        ("a fragment", _url(lambda o, p, q: o + p + "?" + q + "#result")),
        ("16385 characters", _url(long_url)),
        ("a space in the query", in_query(" x")),
        ("CR LF in the query", in_query("\r\nX-Injected: 1")),
        ("a non-ASCII character in the query", in_query("\u00e9")),
        ("another bucket", path(lambda b, n: "/%s-other/%s%s" % (b, prefix, n))),
        ("the v1 prefix", path(lambda b, n: "/%s/%s%s" % (b, prefix.replace("/v2/", "/v1/"), n))),
        ("an extra segment", path(lambda b, n: "/%s/%s%s/extra" % (b, prefix, n))),
        ("a 63-character name", path(lambda b, n: "/%s/%s%s" % (b, prefix, n[:63]))),
        ("a 65-character name", path(lambda b, n: "/%s/%s%s0" % (b, prefix, n))),
        ("an uppercase name", path(lambda b, n: "/%s/%s%s" % (b, prefix, n.upper()))),
        ("%2F for a slash", path(lambda b, n: "/%s/%s%s" % (b, prefix.replace("/v2/", "%2Fv2/"), n))),
        ("a dot segment", path(lambda b, n: "/%s/./%s%s" % (b, prefix, n))),
    ]

    def act(label, patch):
        plane = ctx.plane(capability_patch=patch)
        holder["plane"] = plane
        plane.run()
        _expect_stderr_only(ctx, plane, INVALID, label)
    each_variant(ctx, variants, act)


# ---------------------------------------------------------------- CAP-6

@check("cap.query", clauses=["CRAWLER-CAP-6"], level="MUST",
       title="the signed query: exactly six named fields, split on & only, each value in its form",
       fakes="the signed URL's query with a field missing, repeated, added or empty, \"&&\", a field "
             "without \"=\", \";\" as a separator; X-Goog-Algorithm GOOG4-HMAC-SHA256; "
             "X-Goog-SignedHeaders reordered, short one name or uppercase; X-Goog-Expires 0, 2101, "
             "\"60s\", \"+900\", Arabic-Indic or superscript digits; X-Goog-Signature uppercase, of odd "
             "length, 126 or 1026 characters; X-Goog-Date lowercase, ISO-extended or at second 60",
       expected="each: CRAWLER_UPLOAD_CAPABILITY_INVALID failed, exit 1 (no traceback); no :fail, no "
                "source request, no PUT")
def _(ctx):
    signed = docs.SIGNED_HEADERS.split(";")

    def drop(name):
        return _query(lambda fields: [item for item in fields if item.partition("=")[0] != name])

    def repeat(name):
        return _query(lambda fields: fields + [item for item in fields if item.partition("=")[0] == name])

    def semicolon(fields):
        # Join X-Goog-Expires and X-Goog-SignedHeaders with ";" instead of "&".
        out = []
        for item in fields:
            if out and out[-1].startswith("X-Goog-Expires=") and item.startswith("X-Goog-SignedHeaders="):
                out[-1] = out[-1] + ";" + item
            else:
                out.append(item)
        return out

    # X-Goog-Expires=0 alone: the URL dated ahead, expires_at before its date.
    zero_expires = {"url_issued_offset_s": ZERO_EXPIRES_DATE_AHEAD_S, "expires_in_s": ZERO_EXPIRES_AT_AHEAD_S,
                    "capability_patch": _field("X-Goog-Expires", lambda v: "0")}
    variants = [
        ("X-Goog-Credential missing", {"capability_patch": drop("X-Goog-Credential")}),
        ("X-Goog-Date repeated", {"capability_patch": repeat("X-Goog-Date")}),
        ("a seventh field", {"capability_patch": _query(lambda f: f + ["X-Goog-Extra=1"])}),
        ("X-Goog-Credential empty", {"capability_patch": _field("X-Goog-Credential", lambda v: "")}),
        ("\"&&\"", {"capability_patch": _query(lambda f: f[:2] + [""] + f[2:])}),
        ("a field without \"=\"", {"capability_patch": _query(lambda f: f + ["X-Goog-Extra"])}),
        ("\";\" as a separator", {"capability_patch": _query(semicolon)}),
        ("X-Goog-Algorithm GOOG4-HMAC-SHA256",
         {"capability_patch": _field("X-Goog-Algorithm", lambda v: "GOOG4-HMAC-SHA256")}),
        ("X-Goog-SignedHeaders reordered",
         {"capability_patch": _field("X-Goog-SignedHeaders", lambda v: ";".join(_swap_signed_headers(signed)))}),
        ("X-Goog-SignedHeaders without one name",
         {"capability_patch": _field("X-Goog-SignedHeaders", lambda v: ";".join(signed[:-1]))}),
        ("X-Goog-SignedHeaders uppercase", {"capability_patch": _field("X-Goog-SignedHeaders", lambda v: v.upper())}),
        ("X-Goog-Expires 0", zero_expires),
        ("X-Goog-Expires 2101", {"capability_patch": _field("X-Goog-Expires", lambda v: str(MAX_URL_EXPIRES_S + 1))}),
        ("X-Goog-Expires \"60s\"", {"capability_patch": _field("X-Goog-Expires", lambda v: v + "s")}),
        ("X-Goog-Expires \"+900\"", {"capability_patch": _field("X-Goog-Expires", lambda v: "+" + v)}),
        ("X-Goog-Expires in Arabic-Indic digits",
         {"capability_patch": _field("X-Goog-Expires", lambda v: "\u0669\u0660\u0660")}),
        ("X-Goog-Expires in superscript digits",
         {"capability_patch": _field("X-Goog-Expires", lambda v: "\u2079\u2070\u2070")}),
        ("X-Goog-Signature uppercase", {"capability_patch": _field("X-Goog-Signature", lambda v: v.upper())}),
        ("X-Goog-Signature of odd length", {"capability_patch": _field("X-Goog-Signature", lambda v: v + "a")}),
        ("X-Goog-Signature of 126 characters", {"capability_patch": _field("X-Goog-Signature", lambda v: v[:126])}),
        ("X-Goog-Signature of 1026 characters",
         {"capability_patch": _field("X-Goog-Signature", lambda v: (v * 9)[:1026])}),
        ("X-Goog-Date lowercase", {"capability_patch": _field("X-Goog-Date", lambda v: v.lower())}),
        ("X-Goog-Date ISO-extended", {"capability_patch": _field(
            "X-Goog-Date", lambda v: "%s-%s-%sT%s:%s:%sZ" % (v[0:4], v[4:6], v[6:8], v[9:11], v[11:13], v[13:15]))}),
        ("X-Goog-Date at second 60", {"capability_patch": _field("X-Goog-Date", lambda v: v[:13] + "60Z")}),
    ]
    _refusals(ctx, variants)


# ---------------------------------------------------------------- CAP-7

@check("cap.headers", clauses=["CRAWLER-CAP-7"], level="MUST",
       title="required_headers is exactly the seven name/value objects of the table, in order and case",
       fakes="the seven reordered, \"content-type\" for Content-Type, 8 entries, 6 entries, CR LF after "
             "a value, x-goog-content-length-range \"1,9\", the egress-policy value changed, an extra key "
             "in an entry, an entry as a [name, value] array, an object instead of the list",
       expected="each: CRAWLER_UPLOAD_CAPABILITY_INVALID failed, exit 1; no :fail, no source request, no PUT")
def _(ctx):
    def swap(headers):
        headers[0], headers[1] = headers[1], headers[0]

    def lower_name(headers):
        headers[0]["name"] = headers[0]["name"].lower()

    def extra_key(headers):
        headers[3]["required"] = True

    variants = [
        ("reordered", _headers(swap)),
        ("\"content-type\" lowercase", _headers(lower_name)),
        ("8 entries", _headers(lambda h: h + [{"name": "x-goog-meta-extra", "value": "1"}])),
        ("6 entries", _headers(lambda h: h[:6])),
        ("CR LF after a value", _header_value(3, "0\r\n")),
        ("x-goog-content-length-range \"1,9\"", _header_value(1, "1,9")),
        ("the egress-policy value changed", _header_value(6, "0" * 64)),
        ("the session value another session", _header_value(4, OTHER_SESSION_ID)),
        ("the request-digest value another digest", _header_value(5, "0" * 64)),
        ("an extra key in an entry", _headers(extra_key)),
        ("an entry as a [name, value] array", _headers(lambda h: [[e["name"], e["value"]] for e in h])),
        ("an object instead of the list", _headers(lambda h: {e["name"]: e["value"] for e in h})),
    ]
    _refusals(ctx, [(label, {"capability_patch": patch}) for label, patch in variants])


# ---------------------------------------------------------------- CAP-8

@check("cap.window", clauses=["CRAWLER-CAP-8"], level="MUST",
       title="X-Goog-Date at most CLOCK_SKEW_S ahead, and expires_at no later than the URL's own expiry",
       fakes="a URL dated 1 h ahead; dated CLOCK_SKEW_S + 100 s ahead; expires_at 60 s after "
             "X-Goog-Date + X-Goog-Expires",
       expected="each: CRAWLER_UPLOAD_CAPABILITY_INVALID failed, exit 1; no :fail, no source request, no PUT")
def _(ctx):
    variants = [
        ("X-Goog-Date 1 h ahead", {"url_issued_offset_s": ONE_HOUR_S}),
        ("X-Goog-Date CLOCK_SKEW_S + 100 s ahead", {"url_issued_offset_s": BEYOND_SKEW_S}),
        ("expires_at 60 s after the URL's expiry",
         {"url_expires_s": URL_EXPIRES_S, "expires_in_s": URL_EXPIRES_S + EXPIRED_AGO_S}),
    ]
    _refusals(ctx, variants)


@check("cap.accepted", clauses=["CRAWLER-CAP-3", "CRAWLER-CAP-6", "CRAWLER-CAP-8"], level="MUST",
       title="what the capability rules allow is accepted: fractions, the largest X-Goog-Expires, a "
             "date within the skew, an expires_at before the URL's expiry",
       fakes="valid capabilities at the edges: expires_at with a 1-digit and a 6-digit fraction; "
             "X-Goog-Expires 2100; X-Goog-Date CLOCK_SKEW_S - 100 s ahead; expires_at 5 min before the "
             "URL's expiry (every other run has the two equal)",
       expected="each: a successful run (exit 0, silent, the result stored and verified)")
def _(ctx):
    variants = [
        ("expires_at with a 1-digit fraction", {"capability_patch": _expires_spelled("%Y-%m-%dT%H:%M:%S.5Z")}),
        ("expires_at with a 6-digit fraction",
         {"capability_patch": _expires_spelled("%Y-%m-%dT%H:%M:%S.123456Z")}),
        ("X-Goog-Expires 2100", {"url_expires_s": MAX_URL_EXPIRES_S}),
        ("X-Goog-Date within the skew", {"url_issued_offset_s": WITHIN_SKEW_S}),
        ("expires_at before the URL's expiry", {"expires_in_s": URL_EXPIRES_S - EXPIRES_AHEAD_S // 2}),
    ]

    def act(label, options):
        plane = ctx.plane(**options)
        plane.run()
        _expect_success_variant(ctx, plane, label)
    each_variant(ctx, variants, act)


@check("cap.window-whole-seconds", clauses=["CRAWLER-CAP-8"], level="MUST",
       title="expires_at is compared with the URL's expiry at whole-second precision (D7)",
       fakes="a broker that stamps X-Goog-Date and expires_at from one clock reading: expires_at is "
             "X-Goog-Date + X-Goog-Expires plus a fraction (.5, then .999999)",
       expected="each: a successful run (exit 0, silent, the result stored and verified)")
def _(ctx):
    def act(label, fraction):
        plane = ctx.plane()

        def patch(cap):  # runs at the redemption, once plane.broker.issued_at (X-Goog-Date) is fixed
            url_expiry = plane.broker.issued_at + plane.broker.url_expires_s
            cap["expires_at"] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(url_expiry)) + fraction + "Z"
        plane.broker.capability_patch = patch
        plane.run()
        _expect_success_variant(ctx, plane, label)
    each_variant(ctx, [("the URL's expiry + 0.5 s", ".5"), ("the URL's expiry + 0.999999 s", ".999999")], act)


def _expect_success_variant(ctx, plane, label):
    """A successful run, named by variant when it is not."""
    result = plane.result
    line = plane.status_line()
    ctx.expect(result.exit_code == 0 and not result.stderr,
               expected="a successful run: exit 0, empty stderr (variant %s)" % label,
               actual=lambda: "exit %s, status line %s; %s" % (
                   result.exit_code, "%s/%s" % line if line else repr(result.stderr[:200]),
                   plane.describe_exchanges()),
               diagnosis="the node refused a capability the contract allows")
    expect_success(ctx, plane)


# ---------------------------------------------------------------- CAP-9

@check("cap.session-mismatch", clauses=["CRAWLER-CAP-9"], level="MUST",
       title="a capability for another session is CRAWLER_BOOTSTRAP_RESPONSE_INVALID, reported on :fail",
       fakes="an otherwise valid capability whose crawler_session_id is another canonical UUID "
             "(a random one; the nil UUID); the bootstrap's own crawler_session_id is the run's",
       expected="each: {\"code\":\"CRAWLER_BOOTSTRAP_RESPONSE_INVALID\",\"status\":\"failed\"}, exit 1; "
                "one :fail carrying that code; no source request, no PUT")
def _(ctx):
    variants = [("another session", OTHER_SESSION_ID), ("the nil UUID", NIL_SESSION_ID)]

    def act(label, session):
        plane = ctx.plane(capability_patch=_set("crawler_session_id", session))
        plane.run()
        expect_outcome(ctx, plane, RESPONSE_INVALID, "failed", 1, variant=label)
        fails = plane.broker.fails()
        codes = [call.doc.get("failure_code") if isinstance(call.doc, dict) else call.body for call in fails]
        ctx.expect(codes == [RESPONSE_INVALID],
                   expected="one :fail with {\"failure_code\":\"%s\"} (variant %s)" % (RESPONSE_INVALID, label),
                   actual="%d :fail call(s), codes %s" % (len(fails), codes),
                   diagnosis="unlike every other capability fault, CAP-9 is reported to the broker")
        expect_untouched(ctx, plane, ("source", "put", "tripwire"), variant=label)
    each_variant(ctx, variants, act)
