"""Output: only the fixed lines of SCAN-OUTPUT-1, chosen by the error's class, and nothing of what
the server said (SCAN-OUTPUT-1, SCAN-SECRET-2).

The worker's stdout is its log: people read it and log shippers keep it. A line built from an
exception's text can carry a server's message, a URL (a pre-signed one is a credential) or a path,
so every line is fixed text with numbers; the failure lines are picked by the class of the error
(an HTTP status, the network, the protocol) so a person can tell them apart. The plane's invariant
checks that every printed line is a safe line and that no error marker was printed; this check
makes the worker print every kind of failure line, with markers in every body it is given.
"""

from conformance import faults
from conformance.checks import check
from conformance.checks.scan._common import describe_run, live_stdout

EXPECTED_LINES = [
    "worker: started with 1 slots",
    "worker slot 0: worker API request failed (HTTP 500)",
    "worker slot 0: worker network operation failed",
    "worker slot 0: worker protocol or state validation failed",
]
DRAIN_LINES = ["worker: draining", "worker slot 0: retired (graceful_drain)"]


@check("output.failure-lines", clauses=["SCAN-OUTPUT-1", "SCAN-SECRET-2"], level="MUST",
       title="an HTTP error, a network error and a protocol error each print their fixed line, and nothing else",
       fakes="no work; claim 1 answered 500 with the error shape (a marker in its message); claim 2 reset while it "
             "is sent; claim 3 answered 201 with an HTML page holding the marker; then 204s; SIGTERM",
       expected="stdout exactly: the ready line, `... worker API request failed (HTTP 500)`, `... worker network "
                "operation failed`, `... worker protocol or state validation failed`, `worker: draining`, `worker "
                "slot 0: retired (graceful_drain)`; stderr empty; the marker nowhere")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    marker = plane.server.marker
    plane.server.script("claim", 500, {"error": {"code": "internal", "message": "boom %s" % marker}}, nth=1)
    plane.server.add_fault(faults.reset(after_bytes=0), plane.server.claim_match(skip=1, first=1))
    plane.server.script("claim", 201, ("<html>%s</html>" % marker).encode("ascii"), nth=2)
    # Act
    life = plane.start()
    plane.wait_for(lambda: len(live_stdout(life)) >= len(EXPECTED_LINES), "the three failure lines")
    plane.wait_claims(4)
    result = plane.stop()
    # Assert
    lines = [line for line in (result.stdout or "").split("\n") if line]
    ctx.expect(lines == EXPECTED_LINES + DRAIN_LINES,
               expected="stdout exactly %r" % (EXPECTED_LINES + DRAIN_LINES),
               actual="stdout %r (%s)" % (lines[:8], describe_run(plane, 6)),
               diagnosis="print the fixed summary of the error's class, never the exception's or the server's text")
    ctx.expect(not (result.stderr or "").strip(),
               expected="nothing on stderr (only a usage error writes there)",
               actual="stderr %r" % (result.stderr or "")[:200],
               diagnosis="write nothing on stderr in a normal run: the worker's lines go to stdout, and stderr is a "
                         "usage error's")
