"""Shared assertions of the crawler checks.

Each helper states one expectation in the contract's words, so a check reads as
Arrange / Act / Assert and a failure names what the node did instead.

Variants (every rule of the capability, every malformed base URL) run through
`each_variant` of conformance/checks/variants.py, re-exported here.
"""

import time
import urllib.parse

from conformance import faults
from conformance.checks import stops
from conformance.childmode import run_node_mode
from conformance.checks.variants import each_variant, retire_plane
from conformance.faults import Match
from conformance.planes import crawler_docs as docs
from conformance.planes.crawler import BUCKET, DEFAULT_SOURCE, SESSION_ID
from conformance.servers import socket_buffer_allowance
from conformance.timeouts import NODE_RUN_TIMEOUT_S, POLL_INTERVAL_S, Deadline, node_hung

__all__ = ["faults", "Match", "docs", "BUCKET", "SESSION_ID", "STOP_BUDGET_S", "SHORT_DEADLINE_S",
           "ENDLESS_BYTES", "SOCKET_SLACK_BYTES",
           "DEADLINE_SLACK_S", "expect_outcome", "expect_no_network", "expect_untouched",
           "expect_reported", "expect_success", "each_variant", "run_variants", "retire_plane", "describe_run",
           "FORBIDDEN_PUT_HEADERS", "PutRecorder", "wait_for", "bulky_csv", "bulky_limits", "expected_target",
           "describe_target_difference", "expected_put_headers", "expect_put_wire", "puts_summary",
           "expect_put_count", "CHILD_ARGS", "DEFAULT_SOURCE", "child_mode_input", "run_child_mode", "stop_unnoticed",
           "outcome_diagnosis", "CANCELLED"]

# The code of a run ended by a stop (CRAWLER-STOP-2, -3).
CANCELLED = "CRAWLER_CANCELLED"

# A stop must end the run this fast in conformance (CRAWLER-STOP-2..5).
STOP_BUDGET_S = 1.0

# The value checks give the timeout variables (CRAWLER-CONFIG-6) when they
# wait for a deadline, and the slack allowed on top of it for start-up, the
# report and a loaded machine.
SHORT_DEADLINE_S = 2.0
DEADLINE_SLACK_S = 4.0

# An answer without Content-Length far beyond any bound (metadata, :redeem,
# the source): a node that reads it all, instead of the bound + 1 bytes, lets
# the fake finish sending it. SOCKET_SLACK_BYTES is what the fake may have
# pushed into the kernel's socket buffers beyond what a node that stopped in
# time read: this machine's largest receive and send buffers, so the bound
# holds however far the kernel grew them. ENDLESS_BYTES leaves twice that,
# and room for the largest bound, between the two kinds of node.
SOCKET_SLACK_BYTES = socket_buffer_allowance()
ENDLESS_BYTES = max(64 << 20, 2 * SOCKET_SLACK_BYTES + (16 << 20))


def describe_run(plane):
    """One line: exit status, status line, and the last requests the fakes saw."""
    result = plane.result
    if result is None:
        return "the node did not run"
    line = plane.status_line()
    return "exit %s, status line %s; %s" % (
        result.exit_code, "%s/%s" % line if line else repr(plane.stderr_text()[:200]),
        plane.describe_exchanges())


def stop_unnoticed(plane):
    """The diagnosis "no handler ran", when the run shows no sign of the stop the
    harness sent (no CRAWLER_CANCELLED status line, no exit 143); None when it
    shows one, or no signal was sent."""
    result = plane.result
    if result is None or not result.signals:
        return None
    line = plane.status_line()
    noticed = (line is not None and line[0] == CANCELLED) or result.exit_code == 143
    return stops.unnoticed(result, noticed, "no CRAWLER_CANCELLED status line and no exit 143")


def outcome_diagnosis(plane, code, status, exit_code):
    """What the node most likely does wrong when its status line or exit status
    is not (code, status, exit_code): read off what it printed and did."""
    unnoticed = stop_unnoticed(plane)
    if unnoticed:
        return unnoticed
    result = plane.result
    if result.timed_out:
        return "the node was still running when the harness killed it: some wait has no deadline; bound it"
    got, problem = plane.status_line(), plane.status_problem()
    if got is None:
        if problem:
            return ("end the run with exactly one stderr line, the canonical JSON {\"code\":...,\"status\":...} "
                    "and a newline: here %s" % problem)
        return ("the node printed no status line: every run but a success ends with one stderr line, "
                "{\"code\":\"%s\",\"status\":\"%s\"} here" % (code, status))
    if got[0] != code:
        return "the node reported %s where the contract gives %s in this situation" % (got[0], code)
    if got[1] != status:
        return ("\"reported\" means the failure bundle was stored, \"failed\" that it was not (or that no bundle is "
                "owed in this phase): this run should say %s" % status)
    return ("the exit status follows the outcome: 0 for a stored result or bundle, 143 for CRAWLER_CANCELLED, 1 for "
            "any other failure; this run should exit %d" % exit_code)


def expect_outcome(ctx, plane, code, status, exit_code, variant=None):
    """The run ended with exactly this status line and exit status."""
    where = " (variant %s)" % variant if variant else ""
    expected = "status line {\"code\":\"%s\",\"status\":\"%s\"} and exit %d%s" % (code, status, exit_code, where)
    got = plane.status_line()
    ctx.expect(got == (code, status) and plane.result.exit_code == exit_code, expected=expected,
               actual=lambda: describe_run(plane),
               diagnosis=lambda: outcome_diagnosis(plane, code, status, exit_code))


def expect_success(ctx, plane):
    """Exit 0, nothing on stdout or stderr, and a stored result that restates
    the fetch and whose summary matches its own content (plane.verify_result):
    what the platform can judge of any node's result, whatever its normaliser
    made of the rows."""
    result = plane.result
    ctx.expect(result.exit_code == 0 and not result.stderr and not result.stdout,
               expected="exit 0 with empty stdout and stderr", actual=lambda: describe_run(plane),
               diagnosis=lambda: _success_diagnosis(plane))
    stored = plane.stored_result()
    ctx.expect(stored is not None, expected="the result stored under the capability's object name",
               actual="nothing stored (%s)" % plane.describe_exchanges(),
               diagnosis="PUT the result through the capability's URL, byte for byte, with its headers: the "
                         "store keeps it only under the capability's object name")
    problems = plane.verify_result(stored.raw)
    ctx.expect(not problems, expected="a stored result that restates what was fetched and whose summary "
                                      "matches its content",
               actual=lambda: "; ".join(problems[:4]),
               diagnosis="the result must restate the fetch and the request, and row_count, column_names, "
                         "row_digest and parsed_schema_digest must be read off the content (CRAWLER-RESULT-*)")


def expect_retrieval(ctx, plane, served="the bytes the site served"):
    """The scripted child's header.retrieval and input are the harness's own account of the
    fetch (plane.transport_evidence): hashes and size of what was served, every hop."""
    evidence, exact = plane.transport_evidence()
    if not exact:
        raise RuntimeError("the harness could not rebuild the transport evidence exactly: %s" % evidence)
    want = docs.make_retrieval(plane.broker.source_url, evidence)
    record = plane.child.record() or {}
    got = (record.get("header") or {}).get("retrieval")
    ctx.expect(isinstance(got, dict), expected="the child was given a header with a retrieval object",
               actual="child record: %s" % (sorted(record) if record else "none"),
               diagnosis="give the child the normalisation input header, its retrieval object built from what the node "
                         "fetched")
    wrong = ["%s: expected %r, got %r" % (key, want[key], got.get(key))
             for key in sorted(want) if got.get(key) != want[key]]
    extra = sorted(set(got) - set(want))
    ctx.expect(not wrong and not extra,
               expected="retrieval %s" % docs.canonical(want).decode("utf-8"),
               actual="; ".join(wrong + (["extra keys %s" % extra] if extra else [])),
               diagnosis="the evidence is what the node itself saw, hashed as it streamed; the "
                         "transport_evidence_digest covers every hop (%d here)" % len(evidence["hops"]))
    ctx.expect((record.get("raw_sha256"), record.get("raw_size")) == (want["raw_content_sha256"],
                                                                      want["raw_size_bytes"]),
               expected="the child received the %d bytes of %s" % (want["raw_size_bytes"], served),
               actual="the child received %s bytes with SHA-256 %s" % (record.get("raw_size"),
                                                                        record.get("raw_sha256")),
               diagnosis="feed the child the spooled source exactly as served: every byte, none added, none decoded")


def _success_diagnosis(plane):
    """Why a run the contract expects to succeed did not, from what it printed."""
    result = plane.result
    line = plane.status_line()
    if line is not None:
        return ("the node failed with %s where this run should succeed: find what raises that code here (the "
                "Actual ends with the last requests the fakes saw)" % line[0])
    if result.stdout:
        return "print nothing on stdout, in any run: the platform reads only the status line on stderr"
    if result.stderr:
        return "a successful run prints nothing on stderr (no log line, no warning): stderr is the status line's"
    return "a run the contract expects to succeed did not (exit %s)" % result.exit_code


def expect_reported(ctx, plane, code, variant=None, exit_code=0):
    """A failure bundle with this code was stored and the status line says so."""
    expect_outcome(ctx, plane, code, "reported", exit_code, variant)
    bundle = plane.stored_bundle()
    ctx.expect(bundle is not None and bundle.doc.get("failure_code") == code,
               expected="a stored failure bundle with failure_code %s" % code,
               actual=lambda: "stored: %s" % (bundle.doc if bundle else None),
               diagnosis="after the capability validated, report a failure by PUTting the canonical failure bundle "
                         "through the capability, its failure_code the code on the status line")


def expect_untouched(ctx, plane, what, variant=None):
    """None of the named fakes saw a request: what is a subset of
    identity, redeem, fail, source, put, tripwire."""
    seen = {
        "identity": lambda: len(plane.metadata.requests()),
        "redeem": lambda: len(plane.broker.redeems()),
        "fail": lambda: len(plane.broker.fails()),
        "source": lambda: len(plane.site.requests()),
        "put": lambda: len(plane.puts()),
        "tripwire": lambda: len(plane.tripwire.connections),
    }
    where = " (variant %s)" % variant if variant else ""
    for name in what:
        count = seen[name]()
        ctx.expect(count == 0, expected="no request to the %s fake%s" % (name, where),
                   actual="%d request(s): %s" % (count, plane.describe_exchanges()),
                   diagnosis="the node reached the %s when the contract says it must already have stopped" % name)


def expect_no_network(ctx, plane, variant=None):
    expect_untouched(ctx, plane, ("identity", "redeem", "fail", "source", "put", "tripwire"), variant)


def run_variants(ctx, variants, act):
    """each_variant for an act that returns its plane (kept for the modules
    that use that form; each_variant retires every plane a variant made)."""
    each_variant(ctx, variants, act)


# ---------------------------------------------------------------- PUTs and phases (upload, report, stop, stream, secret)

# Headers CRAWLER-UPLOAD-1 names as never sent on a PUT (lowercase).
FORBIDDEN_PUT_HEADERS = ("accept-encoding", "authorization", "user-agent", "transfer-encoding", "expect")


class PutRecorder(object):
    """Every PUT's request target as the store received it, and optionally a
    note of the node's state as each PUT arrives, or another success status.

    The store's transcript masks the signed query (it is a secret), so the
    byte-for-byte comparison of CRAWLER-UPLOAD-1 reads the raw targets the
    store keeps for checks; they are secrets too and are never printed.
    `success_status` (201, say) replaces the 200 the store answers after it
    committed the object; `observe()` is called as each PUT's head arrives.
    """

    def __init__(self, plane, success_status=None, observe=None):
        self.store = plane.store
        if success_status is not None:
            self.store.put_success_status = success_status
        self.store.on_put = observe

    @property
    def targets(self):
        return list(self.store.put_targets)

    @property
    def observed(self):
        return list(self.store.put_observed)


def wait_for(ctx, plane, condition, what, timeout=NODE_RUN_TIMEOUT_S):
    """Poll until condition() holds, without signalling the node; the check
    fails when the node exits first or does not get there in time."""
    deadline = Deadline(timeout)
    while not condition():
        if not plane.proc.running() or deadline.over():
            if plane.proc.running():
                node_hung()
            ctx.fail(expected="the node to reach %s" % what,
                     actual="it %s (%s)" % ("exited first" if not plane.proc.running() else "did not in time",
                                            plane.describe_exchanges()),
                     diagnosis="the run never reached the phase this check observes")
        time.sleep(POLL_INTERVAL_S)


def bulky_csv(size_bytes):
    """A CSV of about size_bytes whose normalised content is about as large
    (rows of 100-character values): a large result from a cheap source."""
    rows, total, index = [b"id,payload\n"], 0, 0
    while total < size_bytes:
        row = b"%d,%s\n" % (index, b"abcdefghij" * 10)
        rows.append(row)
        total += len(row)
        index += 1
    return b"".join(rows)


def bulky_limits():
    """Default limits, with room for a normalised content of up to three
    quarters of MAX_CRAWLER_RESULT_BYTES (6 MiB of 8: its base64 still fits)."""
    limits = docs.default_limits()
    limits["max_normalized_bytes"] = docs.MAX_CRAWLER_RESULT_BYTES * 3 // 4
    return limits


def expected_target(plane):
    """The PUT's request target: the capability URL's path and query, byte for byte."""
    return plane.broker.upload_url[len(plane.store.origin):]


def describe_target_difference(sent, expected):
    """Where a sent target differs from the capability's, naming parts, never values."""
    sent_path, _, sent_query = sent.partition("?")
    want_path, _, want_query = expected.partition("?")
    if sent_path != want_path:
        return "path %r instead of the capability's %r" % (sent_path, want_path)
    sent_pairs, want_pairs = sent_query.split("&"), want_query.split("&")
    sent_names = [pair.partition("=")[0] for pair in sent_pairs]
    want_names = [pair.partition("=")[0] for pair in want_pairs]
    if sent_names != want_names:
        return "query parameters %s instead of the capability's %s" % (sent_names, want_names)
    changed = [name for name, a, b in zip(sent_names, sent_pairs, want_pairs) if a != b]
    return "the bytes of %s differ from the capability's (decoded and re-encoded?)" % ", ".join(changed)


def expected_put_headers(plane, body_size):
    """(lowercase name, value) pairs of CRAWLER-UPLOAD-1, in order."""
    host = urllib.parse.urlsplit(plane.store.origin).netloc
    pairs = [("host", host), ("content-length", str(body_size))]
    pairs += [(item["name"].lower(), item["value"]) for item in plane.broker.capability["required_headers"]]
    return pairs


def expect_put_wire(ctx, plane, exchange, body_size, what="the PUT"):
    """The PUT's headers are exactly Host, Content-Length, then the seven, in order."""
    got = [(name.lower(), value) for name, value in exchange.headers]
    forbidden = [name for name, _ in got if name in FORBIDDEN_PUT_HEADERS]
    ctx.expect(not forbidden, expected="no %s on %s" % (", ".join(FORBIDDEN_PUT_HEADERS), what),
               actual="%s sent %s" % (what, ", ".join(forbidden)),
               diagnosis="an HTTP library added its default headers; build the PUT's header list by hand")
    want = expected_put_headers(plane, body_size)
    if got != want:
        names_got, names_want = [n for n, _ in got], [n for n, _ in want]
        if names_got != names_want:
            actual = "headers in order %s" % names_got
        else:
            bad = [(n, v) for (n, v), (_, w) in zip(got, want) if v != w]
            actual = "values differ: %s" % ", ".join("%s: %r" % pair for pair in bad)
        ctx.fail(expected="%s's headers exactly, in order: %s" % (what, ", ".join(n for n, _ in want)),
                 actual=actual,
                 diagnosis="the store signs these headers and meters the body with Content-Length: "
                           "Host, Content-Length, then the capability's seven in its order, nothing else")


def puts_summary(plane):
    return "; ".join("PUT -> %s (%s)" % (ex.status, ex.outcome) for ex in plane.puts()) or "no PUT"


def expect_put_count(ctx, plane, count, why):
    puts = plane.puts()
    ctx.expect(len(puts) == count, expected="exactly %d PUT%s (%s)" % (count, "" if count == 1 else "s", why),
               actual="%d: %s" % (len(puts), puts_summary(plane)),
               diagnosis=lambda: stop_unnoticed(plane) or (
                   "the node sent more PUTs than this run calls for (%s): the capability is create-only, so a PUT is "
                   "never repeated" % why if len(puts) > count else
                   "the node sent fewer PUTs than this run calls for (%s)" % why))


# ---------------------------------------------------------------- the node file's own child mode (child, norm)

# The child protocol's argv tail (CRAWLER-CHILD-1).
CHILD_ARGS = ["--input-fd", "0", "--result-fd", "1"]


def child_mode_input(source, limits=None, raw_sha256=None):
    """(header, request) of a normalisation input for `source`, fetched in one
    hop from the request's URL; raw_sha256 replaces the header's hash of it
    (an input whose header and bytes disagree)."""
    request = docs.make_request("https://source.conformance.test/data.csv", "a" * 64, limits=limits)
    evidence = docs.make_evidence([docs.make_hop(request["query"]["url"], content_type="text/csv",
                                                 content_length=len(source))],
                                  raw_sha256 or docs.sha256_hex(source), len(source))
    header = docs.input_header(request, docs.make_retrieval(request["query"]["url"], evidence), docs.clean_room())
    return header, request


def run_child_mode(ctx, header, raw):
    """Run the node file as its own normaliser, the way CRAWLER-CHILD-1 starts it
    unpinned ([python, -I, -S, node, --input-fd, 0, --result-fd, 1], the six
    child variables, cwd /), with canonical(header) + \n + raw on stdin; the
    CompletedProcess. SKIP when the node is not a Python file."""
    env = dict(docs.THREAD_PINS)
    env[docs.ATTESTATION_ENV] = header["request"]["egress_policy_attestation"]
    return run_node_mode(ctx, CHILD_ARGS, docs.canonical(header) + b"\n" + raw, env)
