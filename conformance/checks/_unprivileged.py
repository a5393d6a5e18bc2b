"""Running a node as an unprivileged user from a root harness (shared by the contracts' secret checks).

Only for a process whose euid is not root does dumpability show from outside: the kernel makes
the /proc/<pid>/* files of a dumpable process owned by its euid, and those of a process that is
not dumpable owned by root. A harness running as root therefore starts the node through a small
launcher (DROP_PRIVILEGES) that drops to UNPRIVILEGED_UID before it executes the node, and reads
who owns the node's /proc files (CRAWLER-SECRET-1, SESSION-SECRET-4).
"""

import os
import shutil
import sys

from conformance.checks import NodeSpec

__all__ = ["UNPRIVILEGED_UID", "UNPRIVILEGED_GID", "DROP_PRIVILEGES", "DROP_FAILED", "unsearchable", "proc_uids",
           "open_traversable", "reachable_copy", "unprivileged_node"]

# The unprivileged user the node runs as ("nobody" on most systems).
UNPRIVILEGED_UID = 65534
UNPRIVILEGED_GID = 65534

# Run before the node's own argv, as root: drop to the unprivileged user,
# keep the parent-death signal (a change of credentials clears it), then exec
# the node. The exec makes the node dumpable again (a plain program), so what
# its /proc files show afterwards is the node's own doing. When the
# interpreter lives under a directory other users cannot search (a
# per-user install under /root, say), that directory is covered, in a mount
# namespace of the node's own, by a tmpfs holding only the one entry that
# leads to the interpreter: every path stays the same.
#   argv: UID GID HIDDEN_DIR ENTRY STAGE_DIR DROP_FAILED NODE ARGV...   (HIDDEN_DIR "" for none)
DROP_PRIVILEGES = r"""
import ctypes, os, sys
uid, gid, hidden, entry, stage = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
argv = sys.argv[7:]
libc = ctypes.CDLL(None, use_errno=True)
def must(ok, what):
    if not ok:
        err = ctypes.get_errno()
        raise OSError(err, "%s: %s" % (what, os.strerror(err)))
try:
    if hidden:
        CLONE_NEWNS, MS_BIND, MS_MOVE, MS_REC, MS_PRIVATE = 0x20000, 4096, 8192, 16384, 1 << 18
        inner = os.path.join(hidden, entry)
        must(libc.unshare(CLONE_NEWNS) == 0, "unshare(CLONE_NEWNS)")
        # Private first: no mount made below may propagate out of this namespace.
        must(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) == 0, "mount --make-rprivate /")
        must(libc.mount(inner.encode(), stage.encode(), None, MS_BIND | MS_REC, None) == 0, "bind " + inner)
        must(libc.mount(b"tmpfs", hidden.encode(), b"tmpfs", 0, b"mode=0755") == 0, "tmpfs over " + hidden)
        os.mkdir(inner)
        must(libc.mount(stage.encode(), inner.encode(), None, MS_MOVE, None) == 0, "move to " + inner)
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
    os.execvp(argv[0], argv)
except Exception as exc:
    os.write(2, ("%s %s\n" % (sys.argv[6], exc)).encode("utf-8", "replace"))
    os._exit(126)
"""
# The launcher's first line on stderr when it fails (its argv[6]), so the check
# can tell a harness failure from the node's.
DROP_FAILED = "--drop-privileges-failed:"


def unsearchable(path):
    """[(directory, entry)] for each ancestor of path that other users cannot
    search (no o+x), with the entry below it on the way to path."""
    found, current = [], "/"
    for entry in os.path.realpath(path).strip("/").split("/"):
        if not os.stat(current).st_mode & 0o001:
            found.append((current, entry))
        current = os.path.join(current, entry)
    return found


def proc_uids(pid):
    """(real, effective) uid from /proc/<pid>/status."""
    with open("/proc/%d/status" % pid) as handle:
        for line in handle:
            if line.startswith("Uid:"):
                fields = line.split()
                return int(fields[1]), int(fields[2])
    raise RuntimeError("no Uid line in /proc/%d/status" % pid)


def open_traversable(path, stop):
    """Let another user reach `path` (a directory under the check's own
    temporary directory) and write in it: its parents up to `stop` get
    o+x, path itself is given to the unprivileged user."""
    os.chown(path, UNPRIVILEGED_UID, UNPRIVILEGED_GID)
    parent = os.path.dirname(path)
    while len(parent) >= len(stop):
        os.chmod(parent, os.stat(parent).st_mode | 0o001)
        if parent == stop:
            break
        parent = os.path.dirname(parent)


def reachable_copy(ctx, path):
    """`path` when the unprivileged user can reach it, else a copy it can read under the check's own
    temporary directory: the harness's CA file, say, where conformance.pyz extracts itself for root
    (under /root/.cache, which other users cannot search)."""
    if not unsearchable(path):
        return path
    folder = ctx.tmpdir("unprivileged-files")
    copy = os.path.join(folder, os.path.basename(path))
    shutil.copyfile(path, copy)
    os.chmod(copy, 0o644)
    open_traversable(folder, ctx.tmp)
    return copy


def unprivileged_node(ctx, files=()):
    """The NodeSpec that runs ctx.node as UNPRIVILEGED_UID through DROP_PRIVILEGES, or SKIP when the
    harness is not root or the node's files (its own, its interpreter, `files`) are out of that
    user's reach. Swap it into ctx.node for the one start that needs it."""
    if os.geteuid() != 0:
        ctx.skip("needs root, to start the node as uid %d: a node running as the harness's own uid owns "
                 "its /proc files whether or not it is dumpable" % UNPRIVILEGED_UID)
    # The harness's interpreter runs DROP_PRIVILEGES; the node's own (--python) runs the node.
    node_python = ctx.node.argv[0] if ctx.node.path and os.path.isabs(ctx.node.argv[0]) else sys.executable
    interpreter = set(unsearchable(sys.executable) + unsearchable(sys.base_prefix) + unsearchable(node_python))
    others = [p for p in (ctx.node.path,) + tuple(files) if p and unsearchable(p)]
    if len(interpreter) > 1 or others:
        hidden_by = {}  # directory -> what it hides
        for directory, target in sorted(interpreter) + [(unsearchable(p)[0][0], p) for p in others]:
            hidden_by.setdefault(directory, []).append(target)
        ctx.skip("uid %d cannot reach the node's files here: other users cannot search %s. Make each o+x, or "
                 "put the interpreter, the node and the harness where other users can read them"
                 % (UNPRIVILEGED_UID, "; ".join("%s (on the way to %s)" % (directory, " and ".join(targets))
                                                for directory, targets in sorted(hidden_by.items()))))
    hidden, entry = interpreter.pop() if interpreter else ("", "")
    original = ctx.node
    return NodeSpec([sys.executable, "-I", "-S", "-c", DROP_PRIVILEGES, str(UNPRIVILEGED_UID),
                     str(UNPRIVILEGED_GID), hidden, entry, ctx.tmpdir("mount-stage"), DROP_FAILED] + original.argv,
                    original.path, original.display)
