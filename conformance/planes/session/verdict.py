"""Judging a session run across fakes: the summary line, the output rules, where secrets went.

    summaries, problems = parse_summaries(result.stdout)      # SESSION-EXIT-1, -2
    output_violations(run, summaries, problems)               # SESSION-EXIT-2, -3, -4
    transcript_leaks(name, fake, secrets, describe)           # SESSION-SECRET-1 at the store, the metadata server

The plane (plane.py) calls these from its invariants(); a check may call parse_summaries on any
stdout. Nothing here retypes a document: the summary's shape is contract/schemas/session/.
"""

import signal

from conformance.invariants import Violation
from conformance.planes.session.control import JsonError, canonical, parse_strict, schema_problems
from conformance.servers import MASK

__all__ = ["parse_summaries", "output_violations", "transcript_leaks", "harness_killed", "FAILED_LINE",
           "CONFIG_INVALID"]

# SESSION-EXIT-3: the last stderr line of a run whose summary says failed.
FAILED_LINE = "%s: session job did not reach a terminal session state"
# SESSION-CONFIG-1: a configuration error ends the run before any summary exists.
CONFIG_INVALID = "SESSION_WORKER_CONFIG_INVALID"
# SESSION-EXIT-4: the only exit statuses.
EXIT_STATUSES = (0, 1, 2)
TRACEBACK = "Traceback (most recent call last)"


def parse_summaries(stdout):
    """(summaries, problems) of stdout: each line parsed strictly, held to the canonical
    encoding and the summary schema (SESSION-EXIT-1). A line that fails is a problem and is
    left out of summaries; a last line without its newline is one too."""
    summaries, problems = [], []
    text = stdout or ""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    elif text:
        problems.append("stdout does not end with a newline")
    for number, line in enumerate(lines, 1):
        try:
            doc = parse_strict(line.encode("utf-8", "surrogateescape"))
        except JsonError as exc:
            problems.append("stdout line %d is not strict JSON (%s)" % (number, exc))
            continue
        found = schema_problems("summary", doc)
        if not found and canonical(doc) != line.encode("utf-8", "surrogateescape"):
            found = ["not canonical JSON"]
        if found:
            problems.append("stdout line %d is not a summary: %s" % (number, "; ".join(found[:3])))
            continue
        summaries.append(doc)
    return summaries, problems


def harness_killed(result):
    """True when the harness SIGKILLed the node (a timeout, a crash point): no output rule holds then."""
    return bool(result.killed or result.timed_out or any(signum == signal.SIGKILL for _t, signum in result.signals))


def output_violations(result, mode, summaries, problems, plane_argv):
    """SESSION-EXIT-2, -3, -4 for one run the harness did not kill. plane_argv: the plane built
    the command line (a run that must get past it)."""
    if harness_killed(result):
        return []
    found = []
    stderr_lines = [line for _t, line in result.stderr_lines]
    if result.exit_code not in EXIT_STATUSES:
        found.append(Violation("SESSION-EXIT-4: exit statuses", "exit 0, 1 or 2",
                               "exit %s" % result.exit_code, "every end of a run is one of the three statuses"))
    if any(TRACEBACK in line for line in stderr_lines):
        found.append(Violation("SESSION-EXIT-3: no traceback", "stderr lines that each carry a code",
                               "a Python traceback on stderr", "catch every error and end with its code "
                               "(SESSION_WORKER_FAILED for one nothing foresaw)"))
    if problems:
        found.append(Violation("SESSION-EXIT-2: stdout carries summaries only", "each stdout line a canonical "
                               "summary (schema summary)", "; ".join(problems[:3])))
    config_error = bool(stderr_lines) and stderr_lines[0].startswith(CONFIG_INVALID + ":")
    if mode == "job":
        expect_one = plane_argv and result.exit_code in (0, 1) and not config_error
        if len(summaries) > 1 or (expect_one and not summaries and not problems):
            found.append(Violation("SESSION-EXIT-2: one summary line", "exactly one summary line on stdout",
                                   "%d summary lines" % len(summaries),
                                   "write the summary once, as the last thing on stdout"))
    if mode == "job" and len(summaries) == 1 and result.exit_code in EXIT_STATUSES:
        summary = summaries[0]
        wanted = 0 if summary["status"] == "stopped" else 1
        if result.exit_code != wanted:
            found.append(Violation("SESSION-EXIT-4: the status follows the summary",
                                   "exit %d with a %s summary" % (wanted, summary["status"]),
                                   "exit %s" % result.exit_code))
        if summary["status"] == "failed":
            line = FAILED_LINE % summary["failure_code"]
            if not stderr_lines or stderr_lines[-1] != line:
                found.append(Violation("SESSION-EXIT-3: a failed run's last stderr line", repr(line),
                                       repr(stderr_lines[-1]) if stderr_lines else "no stderr"))
    return found


def transcript_leaks(name, fake, secrets, describe, authorization=True):
    """SESSION-SECRET-1 at a fake that must never see a secret (the store, the metadata server):
    a secret in a request's path or in any header value, a header the transcript masked because
    it held one, and (authorization: none is allowed there) an Authorization or Cookie header."""
    found = []
    for ex in fake.transcript:
        where = []
        path = ex.path[:-len("?" + MASK)] if ex.path.endswith("?" + MASK) else ex.path
        for secret in secrets:
            if secret in path:
                where.append("%s in the path" % describe(secret))
        for header, value in ex.headers:
            lowered = header.lower()
            if lowered in ("authorization", "cookie", "proxy-authorization") and authorization:
                where.append("the %s header (none is allowed)" % header)
            elif MASK in value:
                where.append("a secret in the %s header" % header)
            else:
                where += ["%s in the %s header" % (describe(s), header) for s in secrets if s in value]
        if where:
            found.append(Violation("SESSION-SECRET-1: nothing of a credential reaches the %s" % name,
                                   "no credential in any request to the %s" % name,
                                   "%s %s: %s" % (ex.method, path, ", ".join(where)),
                                   "send the identity token only to the exchange and the capability only to "
                                   "callback_base_url; the download is anonymous (SESSION-ACQUIRE-7)"))
    return found
