"""Shared block `atomic_write`: canonical copy (see nodes/blocks/README.md).

Everything below the `# ---- block body ----` line is embedded verbatim in
each node that uses it; the imports above the line are the node's own job.
"""
import os
import secrets

# ---- block body ----
# atomic_write: a file appears whole under its final name or not at all, and
# no temporary name survives a failure.


def atomic_write(path, content, mode=0o600, durable=True):
    """Write `path` through a temporary name in the same directory.

    `content` is bytes, or a callable that receives the open file descriptor
    and writes to it.  A reader sees the old file or all of the new one, never
    a torn one; the temporary name is removed on every failure, including a
    KeyboardInterrupt or a stop raised by the callable.  With `durable` the
    data is fsynced before os.replace() and the directory entry after it (best
    effort), so a power loss leaves one or the other too; without, neither
    (for a file nothing read after a restart depends on).
    """
    directory, name = os.path.split(os.path.abspath(path))
    temporary = os.path.join(directory, ".%s.%s.partial" % (name, secrets.token_hex(6)))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(temporary, flags, mode)
    try:
        try:
            if callable(content):
                content(fd)
            else:
                view = memoryview(content)
                while view:
                    view = view[os.write(fd, view):]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    if not durable:
        return
    try:
        dir_fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass  # some filesystems refuse to sync a directory; the rename stands
