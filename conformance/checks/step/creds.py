"""The credentials envelope: where it is, when it is re-read, what it must hold."""

import time

from conformance.checks import check
from conformance.checks.step._common import (
    hold_answer, hold_input,
    OMIT, Match, csv_inputs, expect_diagnostics, expect_exit, expect_marker, expect_no_marker, faults)


def _after_first_input(plane, items):
    """Hold the answer to input 1's GET (already authorised); returns the
    predicate of the hold. What the plane does meanwhile happens after input 1
    was read and before anything later: every step reads its inputs, whatever
    it writes and when."""
    return hold_input(plane, items[0], phase="response")


def _under_second_input(plane, items):
    """Hold input 2's GET before the store looks at its token; returns the
    predicate of the hold. What the plane does meanwhile decides that request."""
    return hold_input(plane, items[1], phase="request")


def _refusals(plane, code="ExpiredToken"):
    return [ex for ex in plane.store.transcript if ex.error_code == code]


def _token_of(ex):
    return ex.notes.get("token_seq")


def _startup_refusal(label, title, code, arrange, fakes):
    @check("creds.startup-%s" % label, clauses=["STEP-CREDS-5"], level="MUST", title=title, fakes=fakes,
           expected="exit %d; exactly one '<program>: ...' stderr line; no request; no marker" % code)
    def _(ctx):
        plane = ctx.step_plane(inputs=csv_inputs(1))
        arrange(plane)
        plane.run()
        expect_exit(ctx, plane, code, "a start-up refusal")
        expect_diagnostics(ctx, plane, count=1, why="one line saying the node could not start")
        ctx.expect(plane.agent.path not in plane.result.stderr, expected="the message names no path",
                   actual="stderr contains the credentials path",
                   diagnosis="say why the node could not start by naming the variable the path came from, never the "
                             "path itself nor anything from the file")
        ctx.expect(not plane.store.transcript, expected="no request at all",
                   actual="%d request(s)" % len(plane.store.transcript),
                   diagnosis="check the envelope before the first request: a broken one ends the run at start-up, "
                             "before the manifest is read")
        expect_no_marker(ctx, plane, "nothing to write it with")
    return _


def _patch(fn):
    def arrange(plane):
        doc = plane.agent.envelope()
        fn(doc)
        plane.agent.write(doc)
    return arrange


_startup_refusal("missing", "a missing credentials file is transient at start-up", 1,
                 lambda plane: plane.agent.remove(), "LSPO_CREDENTIALS_FILE names no file")
_startup_refusal("not-json", "a credentials file that is not JSON is transient", 1,
                 lambda plane: plane.agent.write(raw=b"{not json"), "the file holds '{not json'")
_startup_refusal("version-2", "envelope schema_version 2 is permanent", 10,
                 _patch(lambda doc: doc.update(schema_version=2)), "schema_version 2")
_startup_refusal("version-bool", "envelope schema_version true is permanent (not 1)", 10,
                 _patch(lambda doc: doc.update(schema_version=True)), "schema_version true")
_startup_refusal("unknown-staging", "an unknown staging mode is permanent", 10,
                 _patch(lambda doc: doc["staging"].update(mode="put")), "staging.mode 'put'")


@check("creds.startup-missing-post-url", clauses=["STEP-CREDS-7"], level="MUST",
       title="presigned_post staging without post.url is refused at start-up (D16)",
       fakes="staging.post has no url", expected="exit 10 before any request; no marker")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1), envelope_patch=lambda doc: doc["staging"]["post"].pop("url"))
    plane.run()
    expect_exit(ctx, plane, 10, "a staging block without its fields is permanent")
    ctx.expect(not plane.store.transcript, expected="no request at all",
               actual="%d request(s): %s" % (len(plane.store.transcript), plane.describe_exchanges()),
               diagnosis="validate the staging mode's own fields (post.url, post.fields, post.key_prefix) at start-up, "
                         "before any request")


@check("creds.malformed-inputs", clauses=["STEP-CREDS-7"], level="MUST",
       title="an inputs that is not a list is refused at start-up, an entry that is not an object when "
             "reached; both permanent (D38)",
       fakes="the envelope's inputs is a string; then (second run) a valid input followed by the entry 42",
       expected="exit 10 with no request and no marker; then exit 10 with input 1 read and a failed marker")
def _(ctx):
    first = ctx.step_plane(inputs=csv_inputs(1), envelope_patch=lambda doc: doc.update(inputs="all of them"))
    first.run()
    expect_exit(ctx, first, 10, "an inputs that is not a list is a broken envelope")
    ctx.expect(not first.store.transcript, expected="no request at all: refused at start-up",
               actual="%d request(s): %s" % (len(first.store.transcript), first.describe_exchanges()),
               diagnosis="check that the envelope's inputs is a list at start-up, before any request, like the rest of "
                         "the envelope")
    expect_no_marker(ctx, first, "refused at start-up, like any broken envelope")
    items = csv_inputs(1)
    second = ctx.step_plane(inputs=items, envelope_patch=lambda doc: doc["inputs"].append(42))
    second.run()
    expect_exit(ctx, second, 10, "an entry that is not an object is permanent")
    ctx.expect(second.job.gets(items[0]), expected="input 1 read before the bad entry is reached",
               actual="input 1 was never requested",
               diagnosis="an input entry that is not an object fails only when it is reached: read the valid inputs "
                         "before it first")
    expect_marker(ctx, second, "failed", 10)


@check("creds.legacy-variable", clauses=["STEP-CREDS-1"], level="MUST",
       title="the legacy LSPO_CREDENTIALS variable still locates the envelope",
       fakes="only LSPO_CREDENTIALS is set", expected="exit 0")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1), creds_env="legacy")
    plane.run()
    expect_exit(ctx, plane, 0, "the legacy variable is honoured")


@check("creds.precedence", clauses=["STEP-CREDS-1", "STEP-CREDS-2"], level="MUST",
       title="LSPO_CREDENTIALS_FILE wins; a disagreement is one warning naming variables, not paths",
       fakes="LSPO_CREDENTIALS_FILE is right; LSPO_CREDENTIALS points at a missing file",
       expected="exit 0; one line naming both variables; neither path printed")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1), creds_env="both")
    plane.run()
    expect_exit(ctx, plane, 0, "the new variable is used")
    out = plane.result.stdout + plane.result.stderr
    lines = [l for l in out.splitlines() if "LSPO_CREDENTIALS_FILE" in l and "LSPO_CREDENTIALS " in l + " "]
    ctx.expect(len(lines) == 1, expected="one warning naming LSPO_CREDENTIALS_FILE and LSPO_CREDENTIALS",
               actual="%d such line(s)" % len(lines),
               diagnosis="when both credentials variables are set and differ, print exactly one warning naming both "
                         "and saying LSPO_CREDENTIALS_FILE is used")
    legacy = plane.env()["LSPO_CREDENTIALS"]
    ctx.expect(plane.agent.path not in out and legacy not in out, expected="neither path printed",
               actual="a credentials path appears in the output",
               diagnosis="name the variables, never their values: a path in a log says where the secrets are")


@check("creds.agree-no-warning", clauses=["STEP-CREDS-2"], level="SHOULD",
       title="no warning when both variables name the same file",
       fakes="both variables set to the same path", expected="exit 0; no line mentions LSPO_CREDENTIALS")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1), creds_env="both-same")
    plane.run()
    expect_exit(ctx, plane, 0, "a healthy run")
    out = plane.result.stdout + plane.result.stderr
    ctx.expect("LSPO_CREDENTIALS" not in out, expected="no warning", actual="a line names the variables",
               diagnosis="warn only when the two credentials variables name different files (compare them after "
                         "normpath)")


@check("creds.proactive-refresh", clauses=["STEP-CREDS-3"], level="MUST",
       title="an envelope near expiry is re-read, so a rotation is picked up without a refusal",
       fakes="expires_at 3 s ahead (inside the 5 s margin); once input 1 is read the agent rotates and "
             "the old token is refused from then on",
       expected="exit 0; no ExpiredToken refusal; every later request carries the new token")
def _(ctx):
    items = csv_inputs(3)
    plane = ctx.step_plane(inputs=items, expires_in_s=3)
    committed = _after_first_input(plane, items)
    plane.start()
    if plane.store.wait_for(committed, 30):
        plane.agent.rotate(expire_old=True, expires_in_s=900)
    plane.wait()
    expect_exit(ctx, plane, 0, "the new envelope was read before the old one was refused")
    ctx.expect(not _refusals(plane), expected="no ExpiredToken refusal",
               actual="%d refusal(s)" % len(_refusals(plane)),
               diagnosis="re-open the credentials path on every access once within 5 s of expires_at")
    later = [ex for ex in plane.job.input_gets() if ex.key in (items[1].key, items[2].key)]
    ctx.expect(later and all(_token_of(ex) == 2 for ex in later),
               expected="inputs 2 and 3 fetched with token #2", actual="tokens %s" % [_token_of(ex) for ex in later],
               diagnosis="re-open the credentials path before every request once within 5 s of expires_at, and use the "
                         "new token from then on")


def _expires_variant(label, value, title):
    @check("creds.expires-%s" % label, clauses=["STEP-CREDS-3"], level="MUST", title=title,
           fakes="expires_at %r; once input 1 is read the agent rotates and the old token is refused" % (value,),
           expected="exit 0 with no ExpiredToken refusal (the file is re-read on access)")
    def _(ctx):
        items = csv_inputs(3)
        plane = ctx.step_plane(inputs=items, expires_at=value() if callable(value) else value)
        committed = _after_first_input(plane, items)
        plane.start()
        if plane.store.wait_for(committed, 30):
            plane.agent.rotate(expire_old=True, expires_in_s=900)
        plane.wait()
        expect_exit(ctx, plane, 0, "the rotation is picked up")
        ctx.expect(not _refusals(plane), expected="no ExpiredToken refusal",
                   actual="%d refusal(s)" % len(_refusals(plane)),
                   diagnosis="read an expires_at ending in Z as UTC (fromisoformat refuses Z before Python 3.11)"
                   if label == "zulu" else "treat an expires_at that is missing or cannot be parsed as already "
                                           "expired: re-open the credentials path before every request")


_expires_variant("garbage", "next tuesday", "an unparseable expires_at means re-read on every access")
_expires_variant("missing", OMIT, "a missing expires_at means re-read on every access")
_expires_variant("zulu", lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3)),
                 "an expires_at with a Z suffix is understood")


@check("creds.retry-after-rotation", clauses=["STEP-CREDS-4", "STEP-HTTP-2"], level="MUST",
       title="an ExpiredToken refusal after an unannounced rotation is retried once with the new envelope",
       fakes="expires far ahead; while input 2's GET waits the agent rotates and refuses the old token",
       expected="exit 0; input 2 fetched twice: refused with token #1, then served with token #2")
def _(ctx):
    items = csv_inputs(3)
    plane = ctx.step_plane(inputs=items)
    committed = _under_second_input(plane, items)
    plane.start()
    if plane.store.wait_for(committed, 30):
        plane.agent.rotate(expire_old=True)
    plane.wait()
    expect_exit(ctx, plane, 0, "the retry with the rotated envelope succeeds")
    tries = plane.job.gets(items[1])
    ctx.expect([_token_of(ex) for ex in tries] == [1, 2] and tries[0].error_code == "ExpiredToken",
               expected="two GETs of input 2: token #1 refused, then token #2",
               actual="; ".join("token #%s -> %s %s" % (_token_of(ex), ex.status, ex.error_code or "")
                                for ex in tries),
               diagnosis="after an ExpiredToken refusal, re-read the envelope at once and, if it changed, repeat that "
                         "one request once with the new token")


@check("creds.no-retry-unchanged", clauses=["STEP-CREDS-4"], level="MUST",
       title="an ExpiredToken refusal with no new envelope is not retried and is transient",
       fakes="while input 2's GET waits the token is refused; the file is not replaced",
       expected="exit 1; exactly one GET of input 2")
def _(ctx):
    items = csv_inputs(3)
    plane = ctx.step_plane(inputs=items)
    committed = _under_second_input(plane, items)
    plane.start()
    if plane.store.wait_for(committed, 30):
        plane.store.expire_token(plane.agent.token)
    plane.wait()
    expect_exit(ctx, plane, 1, "dead credentials are transient, not permanent")
    ctx.expect(len(plane.job.gets(items[1])) == 1, expected="one GET of input 2 (nothing new to try)",
               actual="%d GETs" % len(plane.job.gets(items[1])),
               diagnosis="after an ExpiredToken refusal with an unchanged envelope there is nothing new to try: end "
                         "the run as transient without retrying")


@check("creds.same-bytes-no-retry", clauses=["STEP-CREDS-4"], level="MUST",
       title="a rewrite with identical content is not a new envelope (compare documents, not objects)",
       fakes="the file is rewritten with the same bytes once input 1 is read; input 2's GET is refused "
             "ExpiredToken once",
       expected="exit 1; exactly one GET of input 2")
def _(ctx):
    items = csv_inputs(3)
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.status(400, s3_code="ExpiredToken"), Match(method="GET", key=items[1].key))
    committed = _after_first_input(plane, items)
    plane.start()
    if plane.store.wait_for(committed, 30):
        plane.agent.rewrite_same()
    plane.wait()
    expect_exit(ctx, plane, 1, "the same envelope again gives nothing new to try")
    ctx.expect(len(plane.job.gets(items[1])) == 1, expected="one GET of input 2",
               actual="%d GETs" % len(plane.job.gets(items[1])),
               diagnosis="compare the re-read envelope with the held one by value (parsed JSON equal), never by object "
                         "identity: the same bytes again are no new envelope")


@check("creds.at-most-one-retry", clauses=["STEP-CREDS-4"], level="MUST",
       title="a request is retried at most once after an expired-looking refusal",
       fakes="the file is rotated once input 1 is read; input 2's GET is refused ExpiredToken every time",
       expected="exit 1; exactly two GETs of input 2")
def _(ctx):
    items = csv_inputs(3)
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.status(400, s3_code="ExpiredToken"), Match(method="GET", key=items[1].key))
    committed = _after_first_input(plane, items)
    plane.start()
    if plane.store.wait_for(committed, 30):
        plane.agent.rotate(expire_old=False)
    plane.wait()
    expect_exit(ctx, plane, 1, "a second refusal is transient")
    ctx.expect(len(plane.job.gets(items[1])) == 2, expected="two GETs of input 2",
               actual="%d GETs" % len(plane.job.gets(items[1])),
               diagnosis="retry a refused request at most once after an expired-looking refusal; a second refusal ends "
                         "the run as transient")


@check("creds.marker-rereads", clauses=["STEP-CREDS-6", "STEP-MARKER-1"], level="MUST",
       title="the marker write re-reads the credentials first",
       fakes="expires far ahead; while result.json is being answered the agent rotates and refuses the old token",
       expected="exit 0; the first marker POST carries token #2")
def _(ctx):
    items = csv_inputs(2)
    plane = ctx.step_plane(inputs=items)
    committed = hold_answer(plane, "*/result.json")
    plane.start()
    if plane.store.wait_for(committed, 30):
        plane.agent.rotate(expire_old=True)
    plane.wait()
    expect_exit(ctx, plane, 0, "a healthy run")
    posts = plane.collector.marker_posts()
    ctx.expect(posts and _token_of(posts[0]) == 2, expected="first marker POST with token #2",
               actual="marker POSTs with tokens %s" % [_token_of(ex) for ex in posts],
               diagnosis="force a re-read before the receipt: it is written last, on the freshest envelope")


@check("creds.file-vanishes", clauses=["STEP-CREDS-6"], level="MUST",
       title="a credentials file that disappears ends the work; the marker uses the held envelope (D6)",
       fakes="expires_at 3 s ahead (re-read on every access); the file is removed once input 1 is read",
       expected="exit 1; no further input fetched; a failed marker still written")
def _(ctx):
    items = csv_inputs(3)
    plane = ctx.step_plane(inputs=items, expires_in_s=3)
    committed = _after_first_input(plane, items)
    plane.start()
    if plane.store.wait_for(committed, 30):
        plane.agent.remove()
    plane.wait()
    expect_exit(ctx, plane, 1, "a vanished file is transient")
    ctx.expect(not plane.job.gets(items[1]), expected="input 2 never fetched", actual="it was fetched",
               diagnosis="a credentials file that cannot be read ends the work as transient at once; the held envelope "
                         "is a fallback for the marker only")
    expect_marker(ctx, plane, "failed", 1)
