"""Peers: the node against what the upstream's real peers may legally send.

The upstream hello node read its envelope and manifest with json.loads and
.get(), its expiry with datetime.fromisoformat, its store's answers through
urllib (any 2xx, a <Code> found anywhere in an error body) and its proxy
variables as urllib reads them. A real platform may therefore send what our
own fakes never showed: members added by a later release, 6.0 for 6, an
instant with an offset, a 201 to a POST, a proxy named without http://. Each
check here has the plane speak one such variant (conformance/dialect.py's
rewrites where they apply) and judges the run by what the platform sees:
the exit status, the requests, the marker and the objects stored.
"""

from conformance import schema
from conformance.checks import check
from conformance.checks.step._common import (
    IDENTITY, Match, contract_schema, csv_inputs, data_upload, expect_exit, expect_marker, expect_nothing_derived,
    faults, hold_input)

# The forms of expires_at the expiry check serves (conformance/dialect.py's
# INSTANT_FORMS but Z, which creds.expires-zulu serves): a positive offset
# catches a parser that drops the zone, since it then reads the instant
# hours too late and never re-reads before the old token dies.
EXPIRY_FORMS = ("+00:00", "fraction", "offset", "offset-fraction")
EXPIRES_SOON_S = 3

# An S3 error document as a real store may write it: a prolog, a namespace,
# and the Code after a Message long enough that the Code lies past the first
# 160 characters (the snippet a node quotes when it finds no Code).
_S3_NAMESPACE = "http://s3.amazonaws.com/doc/2006-03-01/"


def _s3_error_variant(code, message):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<Error xmlns="%s"><Message>%s</Message>'
            "<Resource>/conformance/inputs</Resource><RequestId>4442587FB7D0A2F9</RequestId>"
            "<Code>%s</Code><HostId>conformance</HostId></Error>" % (_S3_NAMESPACE, message, code)).encode()


REQUEST_TIMEOUT_MESSAGE = ("Your socket connection to the server was not read from or written to within the "
                           "timeout period. Idle connections will be closed.")
EXPIRED_TOKEN_MESSAGE = "The provided token has expired."

# A proxy's answer that opens a tunnel, as an HTTP/1.0 proxy writes it: bare
# LF line ends and a header. http.client, which the upstream tunnelled
# through, reads its status line and headers line by line.
BARE_LF_TUNNEL_REPLY = b"HTTP/1.0 200 Connection established\nProxy-Agent: conformance-proxy/1.0\n\n"


def _expect_success(ctx, plane, why):
    expect_exit(ctx, plane, 0, why)
    return expect_marker(ctx, plane, "succeeded", 0)


def _expect_all_stored(ctx, plane):
    """Every object the marker lists is in the store (the collector re-hashes them)."""
    marker = plane.marker or {}
    missing = [entry.get("relpath") for entry in marker.get("objects") or []
               if plane.collector.stored(entry.get("relpath")) is None]
    ctx.expect(marker.get("objects") and not missing, expected="every listed object stored",
               actual="missing: %s" % missing if missing else "the marker lists nothing",
               diagnosis="record in the marker only what was stored, and store every object the run lists: a member "
                         "the node does not know changes nothing")


def _expect_identity_ints(ctx, plane):
    """The marker's identity is this launch's, in integers, and the marker is valid."""
    marker = plane.marker or {}
    shown = dict((k, marker.get(k)) for k in IDENTITY)
    ctx.expect(all(type(marker.get(k)) is type(v) and marker.get(k) == v for k, v in IDENTITY.items()),
               expected="identity %s, integers as integers" % IDENTITY, actual="%r" % shown,
               diagnosis="an identity number the manifest writes as 41.0 is not an integer: the upstream took "
                         "the environment's, and the marker carries integers (STEP-MANIFEST-4)")
    problems = schema.validate(marker, contract_schema("marker"))
    ctx.expect(not problems, expected="a marker valid against marker.schema.json", actual="; ".join(problems[:3]),
               diagnosis="build the marker with exactly the schema's ten members and real integers, whatever extra "
                         "members or number forms the peers sent")


@check("peer.envelope-members", clauses=["STEP-PEER-1", "STEP-CREDS-5"], level="MUST",
       title="an envelope with members nobody defined, at every level, is read for what it holds",
       fakes="every object of the envelope (the top, each input, staging, post; not the policy's fields, which "
             "the store checks) carries a member a later release might add, holding every JSON type; the "
             "agent rotates to another such envelope after input 1 and refuses the old token",
       expected="exit 0, succeeded marker, every object stored, the later requests on the new token")
def _(ctx):
    items = csv_inputs(3)
    plane = ctx.step_plane(inputs=items, dialect=("members",))
    committed = hold_input(plane, items[0], phase="response")
    plane.start()
    if plane.store.wait_for(committed, 30):
        plane.agent.rotate(expire_old=True)
    plane.wait()
    _expect_success(ctx, plane, "unknown members are ignored, as the upstream's .get() ignored them")
    _expect_all_stored(ctx, plane)
    tokens = [ex.notes.get("token_seq") for ex in plane.job.gets(items[2])]
    ctx.expect(tokens == [2], expected="input 3 fetched once, with token #2", actual="tokens %s" % tokens,
               diagnosis="ignore envelope members the node does not use, at every level: a re-read envelope with new "
                         "members is still valid and its token is used")


@check("peer.manifest-members", clauses=["STEP-PEER-1", "STEP-MANIFEST-3"], level="MUST",
       title="a manifest with members nobody defined is read for what it holds",
       fakes="the manifest carries a member a later release might add (a runtime budget, say), holding every "
             "JSON type; params as usual",
       expected="exit 0; succeeded marker with this launch's identity; result.json echoes params")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1), manifest_dialect=("members",))
    plane.run()
    _expect_success(ctx, plane, "the upstream read the members it used and nothing else")
    _expect_identity_ints(ctx, plane)
    report = plane.report if isinstance(plane.report, dict) else {}
    ctx.expect((report.get("summary") or {}).get("params") == plane.job.manifest.get("params"),
               expected="summary.params %r" % (plane.job.manifest.get("params"),),
               actual="summary %r" % (report.get("summary"),),
               diagnosis="copy the manifest's params into result.json's summary as given, ignoring the members the "
                         "node does not use")


@check("peer.size-floats", clauses=["STEP-PEER-1", "STEP-INPUT-4"], level="MUST",
       title="a size pin written as a whole-number float is that integer, and still holds (D43)",
       fakes="every size pin written as 6.0 for 6; then (second run) input 2's pin one byte short of its body, "
             "as a float",
       expected="exit 0 with every copy stored; then exit 10, nothing made of input 2")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(2), dialect=("floats",))
    plane.run()
    _expect_success(ctx, plane, "6.0 is how some JSON producers write 6")
    _expect_all_stored(ctx, plane)
    items = csv_inputs(2)
    items[1].size_pin = float(len(items[1].data) - 1)
    short = ctx.step_plane(inputs=items)
    short.run()
    expect_exit(ctx, short, 10, "a pin written as a float is still a pin: the body outgrew it")
    expect_nothing_derived(ctx, short, items[1], "it outgrew its size pin")


@check("peer.identity-floats", clauses=["STEP-PEER-1", "STEP-MANIFEST-4"], level="MUST",
       title="identity numbers the manifest writes as floats fall back to the environment, as the upstream's did",
       fakes="the manifest's execution_id, attempt and generation written as 41.0, 2.0, 3.0; the LSPO_* variables "
             "set as the agent sets them",
       expected="exit 0; the marker's identity is 41, 2, 3 as integers; a valid marker")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1), manifest_dialect=("floats",))
    plane.run()
    _expect_success(ctx, plane, "a float identity is no usable integer; the environment has the launch's")
    _expect_identity_ints(ctx, plane)


@check("peer.expiry-forms", clauses=["STEP-PEER-1", "STEP-CREDS-3"], level="MUST",
       title="expires_at with an offset or a fraction is read as the instant it names",
       fakes="in turn, expires_at %d s ahead written %s; once input 1 is read the agent rotates and the old "
             "token is refused" % (EXPIRES_SOON_S, ", ".join(EXPIRY_FORMS)),
       expected="each run exits 0 with no ExpiredToken refusal: the envelope was re-read before it expired")
def _(ctx):
    for form in EXPIRY_FORMS:
        ctx.note("variant: expires_at written %s" % form)
        items = csv_inputs(3)
        plane = ctx.step_plane(inputs=items, expires_in_s=EXPIRES_SOON_S, dialect=("instant:" + form,))
        committed = hold_input(plane, items[0], phase="response")
        plane.start()
        if plane.store.wait_for(committed, 30):
            plane.agent.rotate(expire_old=True, expires_in_s=900)
        plane.wait()
        expect_exit(ctx, plane, 0, "the rotation is picked up (expires_at %s)" % form)
        refused = [ex for ex in plane.store.transcript if ex.error_code == "ExpiredToken"]
        ctx.expect(not refused, expected="no ExpiredToken refusal (expires_at written %s)" % form,
                   actual="%d refusal(s): the node took the envelope for fresh" % len(refused),
                   diagnosis="read expires_at as fromisoformat does, its offset included (STEP-CREDS-3)")


@check("peer.post-answers", clauses=["STEP-PEER-2", "STEP-OUTPUT-3"], level="MUST",
       title="an upload answered 200 or 201 (S3's success_action_status) is accepted like a 204",
       fakes="the policy carries success_action_status 200, then (second run) 201, and the store answers every "
             "accepted POST so: 200 with no body, 201 with a PostResponse XML document",
       expected="both runs exit 0 with a succeeded marker and every object stored")
def _(ctx):
    for status in (200, 201):
        ctx.note("variant: uploads answered %d" % status)
        plane = ctx.step_plane(inputs=csv_inputs(2), post_answer=status)
        plane.run()
        _expect_success(ctx, plane, "any 2xx is success, as urllib's was")
        posts = plane.collector.posts()
        ctx.expect(posts and all(ex.status == status for ex in posts),
                   expected="every POST answered %d" % status, actual="statuses %s" % [ex.status for ex in posts],
                   diagnosis="build each upload exactly as the policy says: the store refused one (see the statuses)")
        _expect_all_stored(ctx, plane)


@check("peer.error-bodies", clauses=["STEP-PEER-2", "STEP-HTTP-1"], level="MUST",
       title="a store code is read wherever the error document puts it",
       fakes="error documents with a prolog, a namespace and the Code after a long Message: the first upload "
             "answered 400 RequestTimeout; then (second run) input 2's first GET answered 400 ExpiredToken while "
             "the agent rotates",
       expected="exit 1 (RequestTimeout is transient, not a 400 without a code); then exit 0 after one retry")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1))
    body = _s3_error_variant("RequestTimeout", REQUEST_TIMEOUT_MESSAGE)
    plane.store.add_fault(faults.status(400, body=body), data_upload(first=1))
    plane.run()
    expect_exit(ctx, plane, 1, "RequestTimeout is retryable wherever the document writes its Code")
    expect_marker(ctx, plane, "failed", 1)

    items = csv_inputs(3)
    rotated = ctx.step_plane(inputs=items)
    rotated.store.add_fault(faults.status(400, body=_s3_error_variant("ExpiredToken", EXPIRED_TOKEN_MESSAGE)),
                            Match(method="GET", key=items[1].key, first=1))
    committed = hold_input(rotated, items[0], phase="response")
    rotated.start()
    if rotated.store.wait_for(committed, 30):
        rotated.agent.rotate(expire_old=False)
    rotated.wait()
    _expect_success(ctx, rotated, "an expired-looking refusal after a rotation is retried once")
    ctx.expect(len(rotated.job.gets(items[1])) == 2, expected="two GETs of input 2",
               actual="%d GET(s)" % len(rotated.job.gets(items[1])),
               diagnosis="find the S3 <Code> wherever the error document puts it (after a prolog, a namespace, a long "
                         "Message): an ExpiredToken there is retried once after a rotation")


@check("peer.proxy-forms", clauses=["STEP-PEER-3", "STEP-PROXY-1", "STEP-PROXY-3"], level="MUST",
       title="a proxy variable without http://, or with a path, names the proxy as urllib read it",
       fakes="HTTPS store behind a proxy that demands credentials; the variables hold user:password@host:port "
             "(no scheme), then (second run) http://user:password@host:port/",
       expected="both runs exit 0; every connection the store accepted came through a CONNECT with the "
                "credentials")
def _(ctx):
    for form in ("schemeless", "path"):
        ctx.note("variant: proxy variables written %s" % form)
        plane = ctx.step_plane(inputs=csv_inputs(1), tls=True, proxy=True, proxy_credentials=True,
                               proxy_form=form)
        plane.run()
        _expect_success(ctx, plane, "the proxy variable names a usable proxy (%s)" % form)
        tunnels = plane.proxy.tunnels()
        ctx.expect(tunnels and len(tunnels) >= len(plane.store.connections)
                   and all(r.credentials == plane.proxy.credentials for r in tunnels),
                   expected="one authenticated tunnel per store connection",
                   actual="%d tunnel(s), %d store connection(s); the proxy saw: %s"
                          % (len(tunnels), len(plane.store.connections), plane.proxy.describe()),
                   diagnosis="read a proxy variable as urllib does (no scheme means http://, a trailing / is ignored) "
                             "and open every store connection through a CONNECT that carries its user and password")


@check("peer.proxy-reply", clauses=["STEP-PEER-2", "STEP-PROXY-3"], level="MUST",
       title="a proxy's answer to CONNECT with bare LF line ends opens the tunnel, as http.client read it",
       fakes="HTTPS store behind a proxy that answers CONNECT with an HTTP/1.0 200 head, a Proxy-Agent header "
             "and bare LF line ends",
       expected="exit 0 with a succeeded marker; every store connection came through a tunnel")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1), tls=True, proxy=True, proxy_reply=BARE_LF_TUNNEL_REPLY)
    plane.run()
    _expect_success(ctx, plane, "the proxy opened the tunnel")
    tunnels, accepted = len(plane.proxy.tunnels()), len(plane.store.connections)
    ctx.expect(accepted and tunnels >= accepted, expected="every store connection through a tunnel",
               actual="%d tunnel(s), %d store connection(s)" % (tunnels, accepted),
               diagnosis="read the proxy's CONNECT answer line by line as http.client does, bare LF line ends "
                         "included, and send every store request through the tunnel")


@check("peer.false-lists", clauses=["STEP-PEER-1", "STEP-CREDS-7"], level="MUST",
       title="inputs written as {} mean no inputs, and an input named by a number is that number's text",
       fakes="the envelope's inputs is {} (JSON false, which the upstream read as none); then (second run) an "
             "input with no relpath and the name 41",
       expected="both runs exit 0 with a succeeded marker; the second reads its input")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1), envelope_patch=lambda doc: doc.update(inputs={}))
    plane.run()
    _expect_success(ctx, plane, "inputs that JSON counts as false are none, as `inputs or []` read them")
    ctx.expect(not plane.job.input_gets(), expected="no input read",
               actual="%d input GET(s)" % len(plane.job.input_gets()),
               diagnosis="an inputs that JSON counts as false ({}, [], null) means no inputs: read none")

    items = csv_inputs(1)

    def numbered(doc):
        for entry in doc["inputs"]:
            entry.pop("relpath", None)
            entry["name"] = 41
    named = ctx.step_plane(inputs=items, envelope_patch=numbered)
    named.run()
    _expect_success(ctx, named, "a name that is a number is its text, as the upstream formatted it")
    ctx.expect(named.job.gets(items[0]), expected="the input read", actual="it was never requested",
               diagnosis="an input's name that is a number is its text: use str(name) for the relpath and read the "
                         "input")
