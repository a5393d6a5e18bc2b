"""Probe children from bytecode: a probe child starts from this run's bytecode of the node file,
never from code older than that file (D54).

A probe child is the node file started again, two ahead of every session and one more after
each probe, and compiling a long node was half of a child's start. So the session compiles the
file once into its scratch directory, names the bytecode by the SHA-256 of the bytes it compiled,
and hashes the file again before every child: a node file replaced while a session runs reaches
the next child, not code kept from before. These checks read a probe child's argv in /proc
(argv[3] is what it runs), never a duration: the figures are the bench's (`make bench-session`).
"""

import os

from conformance.checks import bytecode, check
from conformance.checks.bytecode import edited_copy, file_digest
from conformance.checks.session._common import code_problem
from conformance.checks.session.isolation import _probe_children, _wait
from conformance.runner import proc_field, read_cmdline

# What isolation.code-changed appends to its copy of the node while a session runs: the code is
# the same, the bytes (and so the digest a child's bytecode must carry) are not.
EDIT_TEXT = b"\n# edited by the check isolation.code-changed while a session runs\n"


def node_file(ctx):
    return bytecode.node_file(ctx, "D54")


def _sandboxed_children(plane, exclude=()):
    return [kid for kid in _probe_children(plane.proc.host_pid)
            if kid not in exclude and proc_field(kid, "Seccomp") == "2"]


@check("isolation.warm-code", area="isolation", clauses=["SESSION-ISOLATION-5"], level="SHOULD",
       title="a probe child starts from the node's bytecode in the scratch directory, named by its SHA-256 (D54)",
       fakes="warm pool 1; the harness reads the warm child's argv once its filter is in place",
       expected="argv[3] is <TMPDIR>/<scratch>/probe-code-<sha256 of the node file>.<tag>.pyc, a regular file 0600 "
                "in a directory 0700")
def _(ctx):
    # Arrange
    node = node_file(ctx)
    plane = ctx.plane()
    plane.start(env={"MR_SESSION_WORKER_WARM_POOL_SIZE": "1"})
    plane.wait_claims(1)
    warm = []

    def sandboxed():
        warm[:] = _sandboxed_children(plane)
        return bool(warm)
    # Act
    _wait(ctx, sandboxed, "a warm probe child with its filter in place",
          "start the warm pool before attempt:start (SESSION-ISOLATION-8)")
    argv = read_cmdline(warm[0]) or []
    problem = code_problem(plane.runs[-1].scratch, argv[3], file_digest(node)) if len(argv) > 3 else "no argv[3]"
    plane.close_session()
    plane.wait()
    # Assert
    ctx.expect(problem is None, expected="argv[3] the node's bytecode in the session's scratch directory",
               actual="argv %r: %s" % (argv, problem),
               diagnosis="compile the node file once per session into its scratch directory and start probe "
                         "children from that file: compiling the whole node is half of a child's start (D54)")


@check("isolation.code-changed", area="isolation", clauses=["SESSION-ISOLATION-5"], level="MUST",
       title="a node file changed while a session runs: the next probe child runs the new bytes, never old code",
       fakes="a copy of the node runs with warm pool 1; once the warm child is sandboxed the copy gets a comment "
             "line appended; then one probe",
       expected="the child started after the probe's report runs the edited node file, or its D54 bytecode named "
                "by the edited file's SHA-256")
def _(ctx):
    # Arrange
    copy = edited_copy(ctx, node_file(ctx))
    plane = ctx.plane()
    source = plane.add_source(rows=[["a", 1], ["b", 2]])
    plane.start(env={"MR_SESSION_WORKER_WARM_POOL_SIZE": "1"})
    plane.wait_claims(1)
    warm, fresh = [], []

    def sandboxed():
        warm[:] = _sandboxed_children(plane)
        return bool(warm)
    _wait(ctx, sandboxed, "a warm probe child with its filter in place",
          "start the warm pool before attempt:start (SESSION-ISOLATION-8)")
    # Act
    with open(copy, "ab") as out:
        out.write(EDIT_TEXT)
    probe_id = plane.probe("source_inspect", source)
    plane.wait_report(probe_id)

    def replaced():
        fresh[:] = _sandboxed_children(plane, exclude=warm)
        return bool(fresh)
    _wait(ctx, replaced, "a new warm probe child after the report",
          "replace a child taken from the pool once its probe is reported (SESSION-ISOLATION-8, D52)")
    argv = read_cmdline(fresh[0]) or []
    program = argv[3] if len(argv) > 3 else None
    ok = program is not None and (os.path.realpath(program) == os.path.realpath(copy)
                                  or code_problem(plane.runs[-1].scratch, program, file_digest(copy)) is None)
    plane.close_session()
    plane.wait()
    # Assert
    ctx.expect(ok, expected="argv[3] the edited node file, or its bytecode named by its new SHA-256",
               actual="argv %r" % (argv,),
               diagnosis="hash the node file before every probe child and compile it again when its bytes changed: "
                         "a child started from code kept warm is not the code an operator installed")

