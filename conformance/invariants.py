"""Generic invariants, checked after every run whatever the check was about.

A plane returns a list of `Violation` from its ``invariants()`` method; the
checks framework turns any violation into a FAIL of the check that ran,
naming the invariant. The helpers here know nothing of any contract: a
plane passes them its own secrets, texts, paths and runs.

    violations = scan_for_secrets(secrets, {"stdout": run.stdout}, [store_dir], runs=[run])
    violations += no_process_left([run])
    violations += dir_empty(scratch_dir, name="scratch empty")
"""

import collections
import os

Violation = collections.namedtuple("Violation", "name expected actual diagnosis")
Violation.__new__.__defaults__ = (None,)
Violation.__doc__ = """An invariant that did not hold: its name, what it requires, what was found,
and optionally one sentence of diagnosis."""

# A file larger than this is scanned only in its first and last part, so a
# multi-GiB object does not make every check slow. Secrets in the middle of
# a huge file are not the failure this guards against.
MAX_SCAN_BYTES = 32 << 20


def _mask(secret):
    """How a secret is named in a report: its first 4 characters and its length."""
    return "%s... (%d chars)" % (secret[:4], len(secret))


def _encode(value):
    return value if isinstance(value, bytes) else str(value).encode("utf-8", "surrogateescape")


def _find(needles, haystack):
    """The needles (bytes) that occur in haystack (bytes)."""
    return [n for n in needles if n and n in haystack]


def read_for_scan(path, limit=MAX_SCAN_BYTES):
    """A file's bytes for a secret scan: whole up to limit, else its first and last limit / 2
    (a secret a node writes to a file is written whole, near an end)."""
    size = os.path.getsize(path)
    with open(path, "rb") as handle:
        if size <= limit:
            return handle.read()
        head = handle.read(limit // 2)
        handle.seek(size - limit // 2)
        return head + handle.read()


def scan_for_secrets(secrets, texts=None, paths=(), runs=(), name="no secret in output, argv or files"):
    """Violations for every secret found in texts, files or process arguments.

    secrets: iterable of str/bytes values that must never appear (tokens,
        signed-URL query strings, policy values). Empty values are ignored.
    texts: {label: str or bytes}, e.g. {"stdout": ..., "marker error": ...}.
    paths: files or directories (walked) whose contents are scanned.
    runs: runner.RunResult objects: their stdout, stderr, the node's argv and
        every descendant's argv seen while it ran are scanned. (The
        environment is where secrets are *given* to a node, so it is not.)
    """
    wanted = [(s, _encode(s)) for s in secrets if s]
    if not wanted:
        return []
    by_bytes = {raw: shown for shown, raw in wanted}
    found = []

    def check(label, blob):
        for hit in _find(list(by_bytes), blob):
            found.append((label, by_bytes[hit]))

    for label, blob in (texts or {}).items():
        if blob is not None:
            check(label, _encode(blob))
    for index, run in enumerate(runs):
        prefix = "run %d " % (index + 1) if len(runs) > 1 else ""
        check(prefix + "stdout", _encode(run.stdout or ""))
        check(prefix + "stderr", _encode(run.stderr or ""))
        argvs = dict(run.seen_cmdlines or {})
        if run.cmdline_snapshot is not None:
            argvs.setdefault(run.host_pid, run.cmdline_snapshot)
        for pid, argv in sorted(argvs.items(), key=lambda item: str(item[0])):
            if argv:
                check("%sargv of pid %s" % (prefix, pid), _encode("\0".join(argv)))
    for root in paths:
        if os.path.isdir(root):
            files = [os.path.join(top, f) for top, _dirs, names in os.walk(root) for f in names]
        else:
            files = [root] if os.path.exists(root) else []
        for path in sorted(files):
            try:
                check("file %s" % path, read_for_scan(path))
            except OSError:
                continue
    return [Violation(name, "no credential value appears anywhere the node writes",
                      "secret %s found in %s" % (_mask(_text(secret)), label),
                      "mask credentials before printing or writing them; never put them in argv")
            for label, secret in found]


def _text(value):
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def no_process_left(runs, name="no process left behind"):
    """Violations for every process a run left behind after the node exited
    (the runner kills them and lists them in RunResult.leftover)."""
    violations = []
    for run in runs:
        for pid, argv in run.leftover:
            violations.append(Violation(name, "every child of the node ends before the node exits",
                                        "pid %s (%s) was still running" % (pid, " ".join(argv or ["?"])),
                                        "wait for (or kill) every child process before exiting"))
    return violations


def dir_empty(path, name=None):
    """A violation when the directory holds anything (a missing directory is empty)."""
    try:
        entries = sorted(os.listdir(path))
    except FileNotFoundError:
        return []
    if not entries:
        return []
    shown = ", ".join(entries[:5]) + (", ..." if len(entries) > 5 else "")
    return [Violation(name or "nothing left in %s" % path, "%s is empty after the run" % path,
                      "%d entr%s left: %s" % (len(entries), "y" if len(entries) == 1 else "ies", shown),
                      "remove every temporary file and directory on every exit path")]
