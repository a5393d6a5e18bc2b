"""A node's bytecode of its own file, as the long-lived contracts let a node keep it (scan D34,
session D54): a child process (a scan runner, a session probe child) starts from a `.pyc` the
node compiled once, named by the SHA-256 of the node file's bytes, 0600 in a 0700 directory.

What the checks of both contracts share: the node file under test (or Skip), its digest, why a
path is not such bytecode, and a copy of the node the check may edit while the node runs.
"""

import hashlib
import os
import shutil
import stat

from conformance.checks import NodeSpec, Skip

__all__ = ["node_file", "file_digest", "bytecode_problem", "edited_copy"]


def node_file(ctx, decision):
    """The node file under test, or Skip for a node given as a command (no file to compile or edit)."""
    if ctx.node.path is None or not ctx.node.path.endswith(".py"):
        raise Skip("the node is a command, not a Python file: %s is about a node file's bytecode" % decision)
    return ctx.node.path


def file_digest(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def bytecode_problem(path, name_re, digest, pattern):
    """Why `path` is not bytecode of a node of `digest`: named by `name_re` (its group 1 the digest;
    `pattern` says the name in words), a regular file 0600 in a directory 0700. None when it is.
    Where the directory must be is the caller's to judge."""
    folder = os.path.dirname(path)
    match = name_re.fullmatch(os.path.basename(path))
    if match is None:
        return "%s is not named %s" % (os.path.basename(path), pattern)
    if match.group(1) != digest:
        return "%s names another version of the node (its present SHA-256 is %s)" % (os.path.basename(path), digest)
    try:
        info, directory = os.lstat(path), os.lstat(folder)
    except OSError as exc:
        return "%s cannot be read (%s)" % (path, exc.strerror)
    if not stat.S_ISREG(info.st_mode) or stat.S_IMODE(info.st_mode) != 0o600:
        return "%s is not a regular file of mode 0600" % path
    if not stat.S_ISDIR(directory.st_mode) or stat.S_IMODE(directory.st_mode) != 0o700:
        return "%s is not a directory of mode 0700" % folder
    return None


def edited_copy(ctx, node):
    """Copy the node file into the check's directory and judge the copy from now on (ctx.node):
    the check may append to it while it runs, and the user's own file is never touched."""
    copy = os.path.join(ctx.tmpdir("node"), os.path.basename(node))
    shutil.copyfile(node, copy)
    ctx.node = NodeSpec.from_path(copy, python=ctx.node.python)
    return copy
