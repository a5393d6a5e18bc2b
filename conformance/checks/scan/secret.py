"""Secrets: the token stays in the worker, and only safe lines are printed (SCAN-SECRET-1,
SCAN-SECRET-2).

The plane's invariants look for the token (and every 16-character piece of it) in every output,
file, request and sampled argv after every check. What they cannot see by themselves is the
environment of each process of the tree while it runs: this check holds a runner at work, with the
token given the upstream's way (on argv), and reads the cmdline and environ of the worker and of
every descendant, where a token moved by a variable, or handed down to the runner, would show.
"""

from conformance import faults
from conformance.checks import check
from conformance.checks.scan._common import PHASE_TIMEOUT_S, argv_without_token_file, describe_run
from conformance.runner import descendants, read_cmdline, read_environ

# How long the target GET is held, so the runner is alive while the check reads /proc.
HOLD_TARGET_S = 2.0
# The ready line of a worker given --token comes after two interpreter starts (the re-exec of
# SCAN-TOKEN-4): twice a phase's wait on a loaded machine.
REEXEC_READY_S = 2 * PHASE_TIMEOUT_S


@check("secret.process-tree", clauses=["SCAN-SECRET-1", "SCAN-TOKEN-4"], level="MUST",
       title="no process of the worker's tree holds the token in its cmdline or environ, the runner included",
       fakes="one assignment whose target GET is held 2 s; the token given with --token; every error body carries "
             "the server's marker",
       expected="while the runner runs, the cmdline and environ of the worker and every descendant hold no "
                "16-character piece of the token; the assignment is resolved")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    target = plane.add_target("held.txt", b"password = 0123456789abcdef0123\n")
    res = plane.add_assignment(targets=[target])
    plane.store.add_fault(faults.delay(HOLD_TARGET_S), plane.target_match(target))
    # Act
    life = plane.start(argv=argv_without_token_file(plane) + ["--token", plane.token])
    plane.wait_ready(life, timeout=REEXEC_READY_S)
    plane.wait_for(lambda: plane.store.server.transcript, "the runner's target GET")
    pids = [life.proc.host_pid] + descendants(life.proc.host_pid)
    seen = dict((pid, (read_cmdline(pid), read_environ(pid))) for pid in pids)
    plane.wait_resolved(res)
    plane.stop()
    # Assert
    ctx.expect(len([pid for pid, (argv, _env) in seen.items() if argv]) >= 2,
               expected="the worker and its runner read while the target was held",
               actual="processes seen: %s (%s)" % (sorted(seen), describe_run(plane)),
               diagnosis="run each scan in a runner process of its own: the harness saw fewer than the worker and its "
                         "runner while the target was held")
    pieces = [plane.token[i:i + 16] for i in range(len(plane.token) - 15)]
    holding = []
    for pid, (argv, environ) in sorted(seen.items()):
        text = "\0".join(argv or []) + "\0" + "\0".join("%s=%s" % kv for kv in sorted((environ or {}).items()))
        if any(piece in text for piece in pieces):
            holding.append("pid %d (%s)" % (pid, " ".join((argv or ["?"])[-3:])))
    ctx.expect(not holding,
               expected="no process of the tree with a piece of the token in its cmdline or environ",
               actual="found in %s" % ", ".join(holding),
               diagnosis="move the token off argv and the environment by a pipe, and give a runner neither")
