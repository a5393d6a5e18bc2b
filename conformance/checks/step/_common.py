"""Shared arrangements and assertions of the step checks.

Every helper here states one expectation in the contract's words, so a check
reads as Arrange / Act / Assert and a failure names the clause's concern.
"""

import json
import os
import re

from conformance import faults
from conformance.checks import stops
from conformance.faults import Match
from conformance.planes.step import (EXIT_STATUS, IDENTITY, KEY_PREFIX, MARKER_NAME, OMIT,
                                     RESULT_NAME, Input, is_data_key)

__all__ = ["faults", "Match", "Input", "OMIT", "KEY_PREFIX", "MARKER_NAME", "RESULT_NAME",
           "IDENTITY", "csv_inputs", "expect_exit", "expect_marker", "expect_no_marker",
           "expect_listed", "expect_not_listed", "expect_prompt_stop", "on_event", "stderr_lines",
           "STOP_BUDGET_S", "hold_answer", "contract_schema", "expect_exit_unwaiting", "data_upload",
           "on_data_event", "is_data_key", "diagnostic_prefix", "expect_diagnostics", "hold_input",
           "data_posts_since", "expect_nothing_derived", "SLOW_STOP_IN_CONNECT", "stop_unnoticed",
           "acknowledges_stop", "exit_diagnosis"]

SCHEMA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))), "contract", "schemas", "step")


def contract_schema(name):
    """The JSON Schema contract/schemas/step/<name>.schema.json."""
    with open(os.path.join(SCHEMA_DIR, name + ".schema.json"), encoding="utf-8") as handle:
        return json.load(handle)


# A stop must end the run this fast in conformance (the goal is 100 ms;
# `make bench` measures it precisely, on a quiet machine).
STOP_BUDGET_S = 1.0

# How soon after the start of an answer that never ends a node that needs no
# more of it must exit: far below the 25 s read timeout (READ_TIMEOUT_S) that
# ends a node which waits for the rest, and generous for a loaded machine.
UNWAITING_EXIT_S = 5.0

# Long enough for the plane to act between two requests of the node.
HOLD_ANSWER_S = 0.5


def data_upload(**match):
    """A Match for uploads of the node's own objects: every POST under the
    staging prefix but result.json and the marker, whatever the node named
    them (a derived step chooses its own names)."""
    return Match(method="POST", key=KEY_PREFIX + "*", not_key=[KEY_PREFIX + RESULT_NAME, KEY_PREFIX + MARKER_NAME],
                 **match)


def on_data_event(kind, min_bytes=None):
    """A store-event predicate for an upload of the node's own objects."""
    def predicate(ev):
        # A commit is the store's own event, with no method; every other one is the upload's.
        return (ev.kind == kind and ev.method in (None, "POST") and is_data_key(ev.key)
                and (min_bytes is None or (ev.bytes or 0) >= min_bytes))
    return predicate


def hold_answer(plane, key_glob=None):
    """Delay the store's answer to the first POST matching key_glob (after it is
    committed), or to the first upload of the node's own objects when no glob
    is given; returns the predicate of that commit, so the plane can act
    (rotate, expire, remove the file) before the node hears back."""
    if key_glob is None:
        plane.store.add_fault(faults.delay(HOLD_ANSWER_S), data_upload(first=1, phase="response"))
        return on_data_event("commit")
    plane.store.add_fault(faults.delay(HOLD_ANSWER_S), Match(method="POST", key=key_glob, first=1, phase="response"))
    return on_event("commit", key_glob)


def hold_input(plane, item, phase="response"):
    """Delay the store's handling of the first GET of `item` and return the
    predicate of that hold, so the plane can act at a point every step has,
    whatever its work: with phase "response" the request was authorised and
    its body follows the hold (the plane acts *after* this input was read,
    before the next request); with phase "request" the store has not looked
    at the request's token yet (the plane acts *under* this request)."""
    plane.store.add_fault(faults.delay(HOLD_ANSWER_S), Match(method="GET", key=item.key, first=1, phase=phase))
    return on_event("fault", item.key, method="GET")


def data_posts_since(plane, t):
    """Uploads of the node's own objects that began at or after monotonic time t."""
    return [ex for ex in plane.collector.data_posts() if ex.t_start >= t]


def expect_nothing_derived(ctx, plane, item, why):
    """No upload of the node's own objects began once `item`'s GET had begun:
    whatever a step makes of an input, it makes nothing of one that failed
    verification (judged from the protocol, not from names)."""
    gets = plane.job.gets(item)
    ctx.expect(gets, expected="a GET of input %r" % item.display_name, actual="it was never requested",
               diagnosis=stop_unnoticed(plane) or "the node never asked for this input (it ended with exit %s "
                         "first): read every input the manifest lists, in its order" % plane.result.exit_code)
    after = data_posts_since(plane, gets[0].t_start)
    ctx.expect(not after, expected="no upload of the node's own objects after input %r was requested (%s)"
                                   % (item.display_name, why),
               actual="uploaded after it: %s" % [ex.key for ex in after][:3],
               diagnosis="verify an input completely before doing any work with it; a failed one yields nothing")


def csv_inputs(n=3, rows=50):
    """n small CSV inputs, each with a distinct name and content."""
    items = []
    for i in range(n):
        body = "".join("%d,%d,row %d of input %d\n" % (i, r, r, i) for r in range(rows)).encode()
        items.append(Input("data-%d.csv" % i, body))
    return items


def on_event(kind, key_glob=None, method=None, min_bytes=None, direction=None):
    """A store-event predicate: kind, key (fnmatch), method, byte position."""
    import fnmatch

    def predicate(ev):
        if ev.kind != kind:
            return False
        if method and ev.method != method:
            return False
        if key_glob and not fnmatch.fnmatchcase(ev.key or "", key_glob):
            return False
        if direction and ev.detail != direction:
            return False
        if min_bytes is not None and (ev.bytes or 0) < min_bytes:
            return False
        return True
    return predicate


def stderr_lines(result):
    return [line for _t, line in result.stderr_lines]


def diagnostic_prefix(lines):
    """The `<program>: ` prefix of a node's stderr, learnt from its first line
    (the text up to and including the first ': '), or None. A derived node
    names itself; the checks never assume the reference node's name."""
    if not lines or ": " not in lines[0]:
        return None
    prefix = lines[0].split(": ", 1)[0] + ": "
    return prefix if prefix.strip(": ") and " " not in prefix.strip(": ") else None


def expect_diagnostics(ctx, plane, count=None, why=""):
    """Every stderr line starts with one `<program>: ` prefix, the same on
    every line (STEP-REDACT-2); with `count`, exactly that many lines."""
    lines = stderr_lines(plane.result)
    prefix = diagnostic_prefix(lines)
    if lines:
        diagnosis = "begin every diagnostic line with the node's own name and ': ', the same on every line"
    else:
        diagnosis = stop_unnoticed(plane) or ("the node printed nothing on stderr: say what happened (%s) in a "
                                              "line that begins with its own name and ': '" % (why or "the run"))
    ctx.expect(lines and prefix is not None and all(line.startswith(prefix) for line in lines),
               expected="stderr lines all starting with one '<program>: ' prefix%s" % (" (%s)" % why if why else ""),
               actual="stderr: %r" % plane.result.stderr[:300] if lines else "no stderr line",
               diagnosis=diagnosis)
    if count is not None:
        ctx.expect(len(lines) == count, expected="exactly %d stderr line%s (%s)" % (count, "" if count == 1 else "s",
                                                                                    why),
                   actual="%d line(s): %r" % (len(lines), lines[:3]),
                   diagnosis="say it in %s: %s" % ("one stderr line" if count == 1 else "%d stderr lines" % count,
                                                  "merge or drop the others" if len(lines) > count
                                                  else "the line is missing"))
    return prefix


# What each exit status means (STEP-EXIT-1's map), for diagnoses.
EXIT_MEANING = {0: "success", 1: "a transient failure", 10: "a permanent failure", 20: "a stop (cancelled)"}

# STEP-STOP-1: the handler's stderr line names the signal's number.
_ACK_PATTERN = r"\b(%d|%s)\b"


def acknowledges_stop(result, signum=None, since=None):
    """A stderr line printed after the first signal (or `since`) names it,
    by number or name: the acknowledgement STEP-STOP-1 asks of the handler."""
    if result is None or not result.signals:
        return False
    t_signal, first = result.signals[0]
    signum = first if signum is None else signum
    since = t_signal if since is None else since
    pattern = re.compile(_ACK_PATTERN % (signum, stops.signal_name(signum)))
    return any(t >= since and pattern.search(line) for t, line in result.stderr_lines)


def stop_unnoticed(plane):
    """The diagnosis "no handler ran", when the run shows no sign of the stop the
    harness sent: no stderr line acknowledging it (STEP-STOP-1), no exit 20 and no
    cancelled marker; None when it shows one (or no signal was sent)."""
    result = plane.result
    if result is None or not result.signals:
        return None
    marker = plane.marker if isinstance(plane.marker, dict) else {}
    noticed = acknowledges_stop(result) or result.exit_code == 20 or marker.get("status") == "cancelled"
    return stops.unnoticed(result, noticed, "nothing on stderr acknowledges the stop and the run did not end "
                                            "cancelled")


def exit_diagnosis(plane, codes, why):
    """What the node most likely does wrong when its exit status is not one of `codes`."""
    result = plane.result
    unnoticed = stop_unnoticed(plane)
    if unnoticed:
        return unnoticed
    wanted = " or ".join("%d (%s)" % (c, EXIT_MEANING.get(c, "?")) for c in codes)
    if result.timed_out:
        return ("the node was still running when the harness killed it: a wait with no deadline or a retry "
                "without end; bound it so the run ends with %s (%s)" % (wanted, why))
    code = result.exit_code
    if code is not None and code < 0:
        return ("the node died of signal %d instead of exiting: end every run through one place that exits "
                "with the contract's code, here %s" % (-code, wanted))
    if code not in EXIT_STATUS:
        return ("exit %s is none of the contract's codes (0, 1, 10, 20): an unhandled exception or an argument "
                "parser ended the run; catch it and exit %s (%s)" % (code, wanted, why))
    return ("%s: the contract's failure map gives exit %s here, but the node exited %d (%s); classify this case "
            "as the map does" % (why, wanted, code, EXIT_MEANING[code]))


def expect_exit(ctx, plane, codes, why, diagnosis=None):
    """The process exit status is one of `codes` (an int or a tuple); the
    diagnosis, unless given, is read off the run (exit_diagnosis)."""
    result = plane.result
    codes = codes if isinstance(codes, tuple) else (codes,)
    tail = " | ".join(stderr_lines(result)[-3:]) or "no stderr"
    ctx.expect(result.exit_code in codes and not result.timed_out,
               expected="exit %s (%s)" % (" or ".join(str(c) for c in codes), why),
               actual="%s; stderr: %s" % (result.describe(), tail[:400]),
               diagnosis=lambda: diagnosis or exit_diagnosis(plane, codes, why))


def expect_exit_unwaiting(ctx, plane, exchange, code, why, diagnosis):
    """Exit `code` within UNWAITING_EXIT_S of `exchange`'s answer, an answer
    whose body never ends: the node took what it needed and did not wait."""
    result = plane.result
    waited = None
    if exchange is not None and exchange.t_answer is not None and result.t_exit is not None:
        waited = result.t_exit - exchange.t_answer
    ctx.expect(result.exit_code == code and not result.timed_out and waited is not None
               and waited <= UNWAITING_EXIT_S,
               expected="exit %d (%s) within %.0f s of the answer" % (code, why, UNWAITING_EXIT_S),
               actual="%s, %s after the answer began" % (result.describe(),
                                                         "%.1f s" % waited if waited is not None else "no answer"),
               diagnosis=diagnosis)


def expect_marker(ctx, plane, status, exit_code=None):
    """A completion marker was collected with this status (and exit_code)."""
    marker = plane.marker
    ctx.expect(isinstance(marker, dict),
               expected="a completion marker %s in staging" % MARKER_NAME,
               actual="none was written (%s)" % plane.describe_exchanges(),
               diagnosis=lambda: stop_unnoticed(plane) or (
                   "the node was killed before it wrote its receipt: some wait has no deadline"
                   if plane.result is not None and plane.result.timed_out else
                   "every run that can identify itself ends with its receipt (STEP-MARKER-1)"))
    ctx.expect(marker.get("status") == status and (exit_code is None or marker.get("exit_code") == exit_code),
               expected="marker status %r%s" % (status, "" if exit_code is None else ", exit_code %d" % exit_code),
               actual="status %r, exit_code %r, error %r" % (marker.get("status"), marker.get("exit_code"),
                                                             marker.get("error")),
               diagnosis=lambda: _marker_diagnosis(plane, marker, status, exit_code))
    return marker


def _marker_diagnosis(plane, marker, status, exit_code):
    """Why a marker's status or exit_code is not the expected one, from the run."""
    result = plane.result
    if status == "cancelled":
        return stop_unnoticed(plane) or ("a stop before the status is decided makes the run cancelled with 20, "
                                         "whatever error the stop itself caused (STEP-EXIT-2)")
    if result is not None and marker.get("exit_code") != result.exit_code:
        return ("the marker says exit_code %r but the process exited %s: decide the status and code once, then "
                "write that code in the marker and exit with it" % (marker.get("exit_code"), result.exit_code))
    if exit_code is not None and marker.get("exit_code") in EXIT_MEANING:
        return ("the node recorded %s where the contract's failure map gives %s (status %r): classify this case "
                "as the map does" % (EXIT_MEANING[marker["exit_code"]], EXIT_MEANING.get(exit_code, exit_code),
                                     status))
    return "the marker's status follows its exit_code: succeeded for 0, failed for 1 and 10, cancelled for 20"


def expect_no_marker(ctx, plane, why):
    ctx.expect(plane.marker_raw is None and not plane.collector.marker_posts(),
               expected="no marker written (%s)" % why,
               actual="%d marker POST(s); marker %s" % (len(plane.collector.marker_posts()),
                                                       "stored" if plane.marker_raw else "not stored"),
               diagnosis="write no marker in this case (%s): print one stderr line saying why and exit with the "
                         "failure's code" % why)


def expect_listed(ctx, plane, relpaths, why):
    listed = plane.collector.marker_relpaths()
    missing = [r for r in relpaths if r not in listed]
    ctx.expect(not missing, expected="marker objects include %s (%s)" % (relpaths, why),
               actual="objects: %s" % listed,
               diagnosis="record each object in the marker's inventory before its first byte is sent and keep it "
                         "whatever the write's fate (%s)" % why)


def expect_not_listed(ctx, plane, relpaths, why):
    listed = plane.collector.marker_relpaths()
    present = [r for r in relpaths if r in listed]
    ctx.expect(not present, expected="marker objects exclude %s (%s)" % (relpaths, why),
               actual="objects: %s" % listed,
               diagnosis="list only what this run began to write and the store may hold: %s" % why)


# What a slow stop usually means, by where the node was stopped.
SLOW_STOP_IN_TRANSFER = ("a stop must end the transfer in flight at once: shut the socket down "
                         "from the handler (STEP-STOP-2)")
SLOW_STOP_IN_CONNECT = ("a stop must end a lookup, a connect, a proxy's CONNECT or a TLS handshake at once: "
                        "wait in select() on a non-blocking socket and the stop's wakeup pipe, never in a "
                        "blocking call bounded only by the 10 s deadline (STEP-STOP-3)")


def expect_prompt_stop(ctx, plane, budget_s=STOP_BUDGET_S, diagnosis=SLOW_STOP_IN_TRANSFER):
    """Exit 20 within budget_s of the first signal, with a cancelled marker.

    `diagnosis` says what a slow stop means where this check stops the node;
    a run that shows no sign of the stop at all is told no handler ran
    (stop_unnoticed), and one that was quick but exited otherwise, that
    cancellation wins."""
    result = plane.result
    latency = result.stop_latency_s

    def diagnose():
        if result.exit_code != 20 and latency is not None and latency <= budget_s and not result.timed_out:
            return stop_unnoticed(plane) or ("the node ended at once but exited %s: a stop before the status is "
                                             "decided makes the run cancelled, exit 20, whatever error the stop "
                                             "itself caused (STEP-EXIT-2)" % result.exit_code)
        return stop_unnoticed(plane) or diagnosis
    ctx.expect(result.exit_code == 20 and latency is not None and latency <= budget_s,
               expected="exit 20 within %.1f s of the signal" % budget_s,
               actual="%s, %s after the signal" % (result.describe(),
                                                   "%.3f s" % latency if latency is not None else "no signal"),
               diagnosis=diagnose)
    return expect_marker(ctx, plane, "cancelled", 20)

