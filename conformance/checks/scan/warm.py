"""Warm runners: a runner starts from the node's bytecode, never from code older than the node file,
and a cache that cannot be written costs speed, never the work (D34); its slot sees it exit at once
(D35).

A runner is this same file started again for every assignment, and compiling a long node is most
of a fresh interpreter's start. So the worker compiles the file once, names the bytecode by the
SHA-256 of the bytes it compiled, and hashes the file again at every launch: an operator who
replaces the node file while the worker runs gets the new code in the next runner, not the old one
kept warm. The checks read a runner's argv in /proc (argv[4] is what it runs) and the worker's
descriptors, never a duration: the figures themselves are the bench's (`make bench-scan`).
"""

import os
import re

from conformance.checks import Skip, bytecode, check
from conformance.checks.bytecode import bytecode_problem, edited_copy, file_digest
from conformance.checks.scan._common import faults
from conformance.checks.scan.runner import (STALL_AFTER_BYTES, fd_targets, read_cmdline, running_runner,
                                            wait_running)

# D34: where the runners' code lives in the state tree, and how a file there is named.
CODE_DIR = "runner-code"
CODE_NAME_RE = re.compile(r"runner-([a-f0-9]{64})\.[A-Za-z0-9_-]{1,64}\.pyc")
# D34: what the check appends to its copy of the node between two assignments: the code is the same,
# the bytes (and so the digest a runner's code must carry) are not.
EDIT_TEXT = b"\n# edited by the check runner.code-changed while the worker runs\n"
# D35: how /proc shows a pidfd among a process's descriptors.
PIDFD_LINK = "anon_inode:[pidfd]"


def node_file(ctx):
    return bytecode.node_file(ctx, "D34")


def code_problem(plane, path, digest):
    """Why `path` is not the D34 code for a node of `digest`; None when it is."""
    directory = os.path.join(plane.state_dir, CODE_DIR)
    if os.path.realpath(os.path.dirname(path)) != os.path.realpath(directory):
        return "%s is not in %s" % (path, directory)
    return bytecode_problem(path, CODE_NAME_RE, digest, "runner-<sha256>.<tag>.pyc")


@check("runner.warm-start", area="runner", clauses=["SCAN-RUNNER-1"], level="SHOULD",
       title="a runner starts from the node's bytecode in runner-code/, named by the node file's SHA-256 (D34)",
       fakes="the target's GET stalls after %d bytes (the runner stays mid-download)" % STALL_AFTER_BYTES,
       expected="the runner's argv[4] is <state>/runner-code/runner-<sha256 of the node file>.<tag>.pyc, a regular "
                "file 0600 in a directory 0700")
def _(ctx):
    # Arrange
    node = node_file(ctx)
    plane = ctx.plane()
    target = plane.add_target("slow.txt", b"x" * 4096)
    plane.add_assignment(targets=[target])
    # Act
    _life, _record, pid = running_runner(ctx, plane, target)
    argv = read_cmdline(pid) or []
    problem = code_problem(plane, argv[4], file_digest(node)) if len(argv) > 4 else "no argv[4]"
    # Assert
    ctx.expect(problem is None, expected="argv[4] the node's bytecode in %s/%s" % (plane.state_dir, CODE_DIR),
               actual="argv %r: %s" % (argv, problem),
               diagnosis="compile the node file once into the state tree and start runners from that file: a fresh "
                         "interpreter compiling the whole node on every assignment costs most of a runner's start")


@check("runner.code-changed", area="runner", clauses=["SCAN-RUNNER-1"], level="MUST",
       title="a node file changed while the worker runs: the next runner runs the new bytes, never the old code",
       fakes="a copy of the node runs; one assignment completes; then the copy gets a comment line appended and a "
             "second assignment, whose target's GET stalls after %d bytes" % STALL_AFTER_BYTES,
       expected="the second runner's argv[4] is the node file itself, or the D34 code named by the SHA-256 of the "
                "edited file")
def _(ctx):
    # Arrange
    copy = edited_copy(ctx, node_file(ctx))
    plane = ctx.plane()
    first = plane.add_assignment()
    # Act
    plane.start(pid1=False)
    plane.wait_resolved(first)
    with open(copy, "ab") as out:
        out.write(EDIT_TEXT)
    target = plane.add_target("slow.txt", b"x" * 4096)
    plane.store.add_fault(faults.stall(STALL_AFTER_BYTES), plane.target_match(target))
    plane.add_assignment(targets=[target])
    record = wait_running(plane, target, 1)
    argv = read_cmdline(record["identity"]["payload"]["pid"]) or []
    code = argv[4] if len(argv) > 4 else None
    fresh = code is not None and (os.path.realpath(code) == os.path.realpath(copy)
                                  or code_problem(plane, code, file_digest(copy)) is None)
    # Assert
    ctx.expect(fresh, expected="argv[4] the edited node file, or its bytecode named by its new SHA-256",
               actual="argv %r" % (argv,),
               diagnosis="hash the node file at every launch and compile it again when its bytes changed: a runner "
                         "started from code kept warm is not the code an operator installed")


@check("runner.code-unwritable", area="runner", clauses=["SCAN-RUNNER-1"], level="MUST",
       title="a runner-code/ that cannot be made (a planted file in its place) costs speed, never the work (D34)",
       fakes="a regular file planted at <state>/runner-code before the start; one assignment",
       expected="the assignment is resolved bundle_accepted (its runners started from the node file)")
def _(ctx):
    # Arrange
    node_file(ctx)
    plane = ctx.plane()
    os.makedirs(plane.state_dir, 0o700, exist_ok=True)
    with open(os.path.join(plane.state_dir, CODE_DIR), "wb") as out:
        out.write(b"not a directory\n")
    os.chmod(os.path.join(plane.state_dir, CODE_DIR), 0o600)
    res = plane.add_assignment()
    # Act
    plane.start()
    res = plane.wait_resolved(res)
    # Assert
    ctx.expect(res.resolution == "bundle_accepted", expected="the assignment resolved bundle_accepted",
               actual="resolved %s" % res.resolution,
               diagnosis="a cache that cannot be written or read is no failure: start the runner from the node file")


@check("runner.exit-seen", area="runner", clauses=["SCAN-RUNNER-5"], level="SHOULD",
       title="while its runner runs, the slot waits on a pidfd of it (its exit is seen at once, D35)",
       fakes="the target's GET stalls after %d bytes (the runner stays mid-download)" % STALL_AFTER_BYTES,
       expected="the worker holds a pidfd (%s in /proc/<worker>/fd) while the runner runs" % PIDFD_LINK)
def _(ctx):
    # Arrange
    if not hasattr(os, "pidfd_open"):
        raise Skip("this Python has no os.pidfd_open")
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        raise Skip("this kernel gives no pidfd (Linux before 5.3, or a filter)") from None
    plane = ctx.plane()
    target = plane.add_target("slow.txt", b"x" * 4096)
    plane.add_assignment(targets=[target])
    # Act
    life, _record, _pid = running_runner(ctx, plane, target)
    held = [t for t in fd_targets(life.proc.host_pid).values() if t == PIDFD_LINK]
    # Assert
    ctx.expect(bool(held), expected="a pidfd among the worker's descriptors while its runner runs",
               actual="descriptors %r" % sorted(set(fd_targets(life.proc.host_pid).values())),
               diagnosis="wait for a runner with select() on os.pidfd_open(pid) and the stop's wake pipe, not a "
                         "fixed poll: the exit is then seen the moment it happens")
