"""What the harness concludes from a crawler run, across fakes.

* ``FetchAccount``: the harness's own account of the fetch, from the request
  the broker served and the bytes the source site sent: the transport
  evidence, the normalisation input a node that fetched them gives its child,
  and the judgement of a stored result (``verify_result``, any node's;
  ``reference_problems``, the reference node's example work).
* The node's output: ``parse_status`` reads stderr as the status line, and
  ``output_violations`` states CRAWLER-REPORT-1/3/4/5 on it.
* ``scan``: where a secret appears outside its one place (CRAWLER-SECRET-2).

The documents and their rules come from ``conformance.planes.crawler_docs``,
never retyped here.
"""

import signal

from conformance.invariants import Violation
from conformance.planes import crawler_docs as docs
from conformance.planes.crawler.base import as_bytes, short
from conformance.planes.crawler.site import blocks_of

__all__ = ["FetchAccount", "parse_status", "harness_killed", "output_violations", "scan",
           "DEVELOPMENT_NOTE_MARK"]

# The name every development line must carry: a node talking plain HTTP to a
# store says so once, first on stderr (CRAWLER-CONFIG-4, D19).
DEVELOPMENT_NOTE_MARK = "STORAGE_EMULATOR_HOST"


class FetchAccount(object):
    """The harness's account of one fetch: broker (the request it served) and
    site (what it sent)."""

    def __init__(self, broker, site):
        self.broker = broker
        self.site = site

    def transport_evidence(self):
        """(evidence document, exact): the site's account of its answers,
        starting at the served request's URL (SourceSite.transport_evidence)."""
        request = self.broker.request
        url = request["query"]["url"] if isinstance(request, dict) else self.broker.source_url
        return self.site.transport_evidence(url)

    def served_header(self):
        """(input header, evidence exact, evidence, note): the normalisation
        input a node that fetched what the site served gives its child, built
        from the request the broker served and the harness's own account of the
        fetch; None for the header (with the note saying why) when no result
        may exist (no request served, or the fetch did not end in a 200)."""
        request = self.broker.request
        if not isinstance(request, dict):
            return None, False, None, "no request was served"
        evidence, exact = self.transport_evidence()
        hops = evidence["hops"]
        if not hops:
            return None, exact, evidence, "the source received no request"
        last = hops[-1]
        if last["status"] != 200 or self.site.requests()[-1].entry is None:
            return None, exact, evidence, "the last hop answered %s, not 200" % last["status"]
        try:
            retrieval = docs.make_retrieval(request["query"]["url"], evidence)
            return docs.input_header(request, retrieval, docs.clean_room()), exact, evidence, None
        except (KeyError, TypeError, AttributeError) as exc:
            # A request patched out of shape: no result can be bound to it.
            return None, exact, evidence, "the request served is not one a result can restate (%s: %s)" % (
                type(exc).__name__, exc)

    def verify_result(self, raw):
        """Problems (a list of sentences) with raw as the stored result, judged
        as the platform can judge any node's result (docs.result_problems):
        canonical bytes, every field the node knows equal to the harness's own
        account of the request it served and the bytes its site sent, and the
        content's hash, size and summary read off the content itself. The rows'
        values are never compared: they are the normaliser's work. The
        transport evidence digest is compared exactly when the harness could
        rebuild the evidence exactly (no fault on a source answer), else only
        its shape."""
        header, exact, evidence, note = self.served_header()
        if header is None:
            return ["a result was stored but none should exist: %s" % note]
        try:
            return docs.result_problems(raw, header, exact, evidence)
        except (KeyError, TypeError, AttributeError) as exc:
            # A request patched out of shape (its limits, say): no result can be bound to it.
            return ["a result was stored but none should exist: the request served is not one a result "
                    "can restate (%s: %s)" % (type(exc).__name__, exc)]

    def reference_result(self):
        """(canonical bytes of the result the reference normaliser gives, note):
        the harness's own normaliser over the bytes the site served, for the
        example-work checks; None for the bytes (with the note) when it gives
        none (no result may exist, or the reference refuses the source)."""
        header, _exact, _evidence, note = self.served_header()
        if header is None:
            return None, note
        query = self.broker.request["query"]
        try:
            normalizer = docs.Normalizer(query["data_format"], query["limits"])
            for block in blocks_of(self.site.requests()[-1].entry.source):
                normalizer.feed(bytes(block))
            raw = as_bytes(docs.build_result(header, normalizer.finish()))
        except docs.NormalizationError as exc:
            return None, "the reference normaliser refuses the source: %s" % exc.code
        if len(raw) > docs.MAX_CRAWLER_RESULT_BYTES:  # CRAWLER-CHILD-11: LIMIT_EXCEEDED, never stored
            return None, "the result would exceed MAX_CRAWLER_RESULT_BYTES"
        return raw, None

    def reference_problems(self, raw):
        """Problems with raw as the reference node's result (example work,
        CRAWLER-NORM-*): verify_result's, then every field that differs from
        the reference normaliser's result for the same bytes."""
        problems = self.verify_result(raw)
        expected_raw, note = self.reference_result()
        if expected_raw is None:
            return problems + ["the reference normaliser gives no result here: %s" % note]
        raw = bytes(raw)
        if expected_raw == raw:
            return problems
        actual, _problems = docs.parse_result(raw)
        diffs = []
        docs.diff("", docs.parse_canonical(expected_raw), actual, diffs)
        out = ["%s: the reference gives %s, got %s" % (path or "(top)", short(want), short(got))
               for path, want, got in diffs if not path.endswith("transport_evidence_digest")]
        return problems + (out or ["the result's bytes differ from the reference normaliser's"])


# ---------------------------------------------------------------- the node's output

def parse_status(stderr, plain_http=False):
    """((code, status) or None, problem or None) for a run's stderr. With
    plain_http, one development line naming STORAGE_EMULATOR_HOST may come
    first (CRAWLER-CONFIG-4, D19)."""
    text = stderr or ""
    if plain_http:
        note, _, rest = text.partition("\n")
        if DEVELOPMENT_NOTE_MARK in note and not note.startswith("{"):
            text = rest  # the one development line CRAWLER-CONFIG-4 asks for (D19), before anything else
    if text == "":
        return None, None
    if not text.endswith("\n") or text.count("\n") != 1:
        return None, "stderr is not exactly one line ending in a newline"
    line = text[:-1].encode("utf-8", "surrogateescape")
    try:
        doc = docs.parse_canonical(line)
    except docs.JsonError:
        return None, "the line is not canonical JSON"
    if not isinstance(doc, dict) or sorted(doc) != ["code", "status"]:
        return None, "the line is not exactly {\"code\", \"status\"}"
    if doc["status"] not in ("failed", "reported") or not isinstance(doc["code"], str):
        return None, "status is not \"failed\" or \"reported\""
    return (doc["code"], doc["status"]), None


def harness_killed(result):
    """The harness ended the run with SIGKILL (a timeout, or a check's own
    kill): the node had no say in its exit status or its stderr."""
    return (result.timed_out or result.killed
            or any(signum == signal.SIGKILL for _t, signum in (result.signals or ())))


def output_violations(result, parsed, problem):
    """What the node's stdout, stderr and exit status must be, whatever the
    run (CRAWLER-REPORT-1/3/4/5); parsed and problem are parse_status's."""
    found = []
    for stream in ("stdout", "stderr"):
        if "Traceback (most recent call last)" in (getattr(result, stream) or ""):
            found.append(Violation("CRAWLER-REPORT-5: no traceback", "no traceback on %s" % stream,
                                   "a Python traceback was printed on %s" % stream))
    if result.stdout:
        found.append(Violation("CRAWLER-REPORT-3: stdout stays empty", "empty stdout",
                               "%d bytes on stdout: %s" % (len(result.stdout), short(result.stdout))))
    if harness_killed(result):
        return found
    if result.exit_code not in (0, 1, 2, 143):
        found.append(Violation("CRAWLER-REPORT-4: exit statuses", "exit status 0, 1, 2 or 143",
                               "exit status %s" % result.exit_code))
    if result.exit_code == 2:
        return found  # a usage error prints its usage text instead (CRAWLER-ARGV-1)
    if problem is not None:
        found.append(Violation("CRAWLER-REPORT-3: stderr is empty or one status line",
                               "empty stderr, or exactly one canonical {\"code\",\"status\"} line and \\n",
                               "%s: %s" % (problem, short(result.stderr))))
    elif parsed is not None and parsed[0] not in docs.ALL_CODES:
        found.append(Violation("CRAWLER-REPORT-1: a code not in the table is never produced",
                               "a code of CRAWLER-REPORT-1", "code %s" % short(parsed[0])))
    elif parsed is not None:
        found += _status_agrees(result.exit_code, parsed)
    elif result.exit_code in (1, 143):
        found.append(Violation("CRAWLER-REPORT-3: a run that does not succeed says why",
                               "with exit %s, one status line on stderr" % result.exit_code,
                               "empty stderr"))
    return found


def _status_agrees(exit_code, parsed):
    """The status line and the exit status tell one story (CRAWLER-REPORT-2/4, STOP-2..4, D13)."""
    code, status = parsed
    allowed = {
        0: status == "reported" and code != "CRAWLER_CANCELLED",   # D13: a stop exits 143
        1: status == "failed",
        143: code == "CRAWLER_CANCELLED",
    }
    if exit_code in allowed and not allowed[exit_code]:
        expected = {0: "status \"reported\" of a code other than CRAWLER_CANCELLED (or no line)",
                    1: "status \"failed\"",
                    143: "code CRAWLER_CANCELLED"}[exit_code]
        return [Violation("CRAWLER-REPORT-4: the exit status agrees with the status line",
                          "with exit %s, %s" % (exit_code, expected),
                          "exit %s with %s/%s" % (exit_code, code, status))]
    return []


# ---------------------------------------------------------------- secrets

def scan(places, secrets, describe):
    """A CRAWLER-SECRET-2 violation for each (where, text) of places that
    holds one of secrets (the first found names it, through describe)."""
    found = []
    for where, text in places:
        if text is None:
            continue
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        for secret in secrets:
            if secret in text:
                found.append(Violation("CRAWLER-SECRET-2: secrets stay where they belong",
                                       "no token, signed URL or bootstrap text in %s" % where,
                                       "%s appears in %s" % (describe(secret), where),
                                       "a secret may appear only in the Authorization header of its broker "
                                       "call or the request line of the PUT"))
                break
    return found
