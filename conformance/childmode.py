"""Running a node file directly in one of its child modes, the way the node starts its children.

Some contracts give the node file a mode in which it is its own sandboxed child (the crawler's
normaliser, CRAWLER-CHILD-1; the session's probe child, SESSION-ISOLATION-7) and promise that the
mode keeps its protocol for any input, so that a checker can feed it an input and compare what it
writes. `run_node_mode` starts `[python, -I, -S, node, *args]` with a given environment, `/` as
working directory and the input on stdin, bounded by SHORT_TIMEOUT_S, and returns the
CompletedProcess. A check of a node that is not a Python file is SKIP: its child mode cannot be
started that way.
"""

import subprocess

from conformance import runner as _runner
from conformance.timeouts import SHORT_TIMEOUT_S, Deadline, node_hung

__all__ = ["run_node_mode"]


def run_node_mode(ctx, args, stdin, env, what="child mode"):
    """Run the node file as `python -I -S NODE *args` with `stdin` as its input, `env` as its whole
    environment and `/` as working directory; the CompletedProcess (stdout and stderr as bytes)."""
    if ctx.node.path is None or not ctx.node.path.endswith(".py"):
        ctx.skip("the node is not a Python file: its %s cannot be started directly" % what)
    deadline = Deadline(SHORT_TIMEOUT_S)
    _runner.count_node_start()
    try:
        run = subprocess.run([ctx.node.argv[0], "-I", "-S", ctx.node.path] + list(args), input=stdin,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd="/",
                             timeout=deadline.left())
    except subprocess.TimeoutExpired:
        deadline.over()  # marks the check when the breaker shortened this wait (then node_hung counts nothing)
        node_hung()
        ctx.fail(expected="the %s to finish with its input read (a result or a failure line)" % what,
                 actual="it was still running after %.0f s and was killed" % SHORT_TIMEOUT_S,
                 diagnosis="in child mode the node file must end once it has judged its input, whatever it was")
    ctx.note("%s: exit %d, %d bytes stdout, stderr %r" % (what, run.returncode, len(run.stdout), run.stderr[:200]))
    return run
