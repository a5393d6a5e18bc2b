"""A normaliser child the harness can script (CRAWLER-CHILD-*, CRAWLER-NORM-*).

A crawler check pins this program with MOSTLYRIGHT_CRAWLER_CHILD, so that it can
see what the node gave the child and make the child misbehave on cue:

    path = write_child(os.path.join(tmp, "child"), {"mode": "normal", "record": rec})
    ... run the node with MOSTLYRIGHT_CRAWLER_CHILD=path ...
    json.load(open(rec))    # argv, env, fds, cwd, seccomp status, probes, stdin

The node runs it as `[path, "--input-fd", "0", "--result-fd", "1"]` with six
environment variables (no PATH, no PYTHONPATH), cwd "/", and a seccomp filter
under which socket(), fork/clone and threads fail. So the file is a script whose
shebang names this interpreter by absolute path and which puts the repository
root on sys.path itself; `main()` uses no thread and no socket outside the
probes, which exist to observe the filter.

Behaviour keys (a JSON object, written into the script):

    record        absolute path: write what the child saw there (JSON)
    read_stdin    false: do not read the normalisation input
    sleep_before  seconds to sleep before acting (a stop "mid-child")
    mode          normal (default) | fail | sleep | flood | flood-stderr | segv |
                  empty | raw
    patch, add    normal: [[path, value], ...] applied to the result; a path is
                  a list of keys (or list indexes), value "__delete__" deletes
    encoding      normal: canonical | pretty | unsorted | newline | ascii
    stderr        normal, fail: text written to fd 2 (UTF-8, surrogateescape,
                  so "\\udcff" writes the byte 0xff)
    exit          normal, fail, raw: the exit status
    seconds       sleep: how long (SIGTERM, SIGINT and SIGHUP ignored)
                  flood, flood-stderr: one byte past the node's bound, then a hold
                  that only SIGKILL ends
    stdout        raw: text written to fd 1 as latin-1 bytes
"""

import errno
import hashlib
import json
import os
import signal
import socket
import sys
import threading
import time

from conformance.planes import crawler_docs as docs

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

INPUT_FD = 0
RESULT_FD = 1
ERROR_FD = 2
BLOCK_BYTES = 64 * 1024
# A header line longer than this is not a header; the reference's request is
# bounded by MAX_CRAWLER_REQUEST_BYTES, so the whole header stays well below it.
MAX_HEADER_BYTES = 1024 * 1024
DELETE = "__delete__"
MODES = ("normal", "fail", "sleep", "flood", "flood-stderr", "segv", "empty", "raw")
ENCODINGS = ("canonical", "pretty", "unsorted", "newline", "ascii")


def reference_behaviour():
    """A child that behaves as the reference normaliser does."""
    return {"mode": "normal"}


def write_child(path, behaviour):
    """Write the scripted child as an executable at `path` and return `path`.

    The shebang carries `-IS` as one word: Linux passes everything after the
    interpreter as a single argument, and Python refuses "-I -S" given that way.
    -I keeps PYTHON* variables and the user site out; -S skips site, as the
    reference child does (CRAWLER-CHILD-1)."""
    behaviour = dict(behaviour)
    behaviour.setdefault("deployment", docs.deployment_values())  # the child runs in its own process
    mode = behaviour.get("mode", "normal")
    if mode not in MODES:
        raise ValueError("unknown child mode %r" % mode)
    if behaviour.get("encoding", "canonical") not in ENCODINGS:
        raise ValueError("unknown result encoding %r" % behaviour.get("encoding"))
    if behaviour.get("record") and not os.path.isabs(behaviour["record"]):
        raise ValueError("the record path must be absolute (the child runs in /)")
    text = "".join([
        "#!%s -IS\n" % sys.executable,
        "# A scripted crawler normaliser written by conformance/planes/crawler_child.py.\n",
        "import json, sys\n",
        "sys.path.insert(0, %r)\n" % ROOT,
        "from conformance.planes.crawler_child import main\n",
        "sys.exit(main(json.loads(%r)))\n" % json.dumps(behaviour, sort_keys=True),
    ])
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(path, 0o755)
    return path


# ---------------------------------------------------------------------------
# What the child observes
# ---------------------------------------------------------------------------


def _errno_name(exc):
    return errno.errorcode.get(exc.errno, str(exc.errno)) if exc.errno else type(exc).__name__


def _open_fds():
    """The descriptors open in this process. The one os.listdir() used to read
    the directory is closed by the time readlink() asks about it, so it drops
    out of the list by itself."""
    fds = []
    for name in os.listdir("/proc/self/fd"):
        try:
            os.readlink("/proc/self/fd/" + name)
        except OSError:
            continue
        fds.append(int(name))
    return sorted(fds)


def _read_file(path):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _environment():
    """The environment the child was started with, from /proc/self/environ:
    os.environ is not it, because Python's locale coercion (PEP 538) adds
    LC_CTYPE when no locale variable is set, as in CRAWLER-CHILD-2's six."""
    raw = _read_file("/proc/self/environ")
    if raw is None:
        return dict(os.environ)
    env = {}
    for item in raw.split(b"\0"):
        if item:
            name, _, value = item.partition(b"=")
            env[os.fsdecode(name)] = os.fsdecode(value)
    return env


def _status_fields():
    raw = _read_file("/proc/self/status") or b""
    fields = {"Seccomp": None, "NoNewPrivs": None}
    for line in raw.decode("ascii", "replace").splitlines():
        name, _, value = line.partition(":")
        if name in fields:
            fields[name] = value.strip()
    return fields


def _probe_socket():
    try:
        sock = socket.socket()
    except OSError as exc:
        return _errno_name(exc)
    sock.close()
    return "ok"


def _probe_fork():
    try:
        pid = os.fork()
    except OSError as exc:
        return _errno_name(exc)
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return "ok"


def _probe_thread():
    try:
        thread = threading.Thread(target=lambda: None)
        thread.start()
    except Exception as exc:    # RuntimeError("can't start new thread") under the filter
        return type(exc).__name__
    thread.join()
    return "ok"


def _observe():
    cmdline = _read_file("/proc/self/cmdline") or b""
    return {
        "argv": list(sys.argv),
        "cmdline": [os.fsdecode(part) for part in cmdline.split(b"\0")[:-1]],
        "env": _environment(),
        "fds": _open_fds(),
        "cwd": os.getcwd(),
        "status": _status_fields(),
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "pgid": os.getpgid(0),
        "sid": os.getsid(0),
        "probes": None,
    }


def _probes():
    return {"socket": _probe_socket(), "fork": _probe_fork(), "thread": _probe_thread()}


def _write_record(path, record):
    """Replace the record file whole, so a reader never sees half of one."""
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(record, handle, sort_keys=True)
    os.replace(temporary, path)


# ---------------------------------------------------------------------------
# Reading the normalisation input (CRAWLER-CHILD-5)
# ---------------------------------------------------------------------------


class _Input:
    """What came on stdin, read block by block: the raw bytes go straight to
    the Normalizer and are never held whole (CRAWLER-NORM-3)."""

    def __init__(self):
        self.stdin_hash = hashlib.sha256()
        self.stdin_size = 0
        self.raw_hash = hashlib.sha256()
        self.raw_size = 0
        self.header = None
        self.header_canonical = False
        self.header_error = None
        self.normalized = None
        self.failure_code = None

    def read(self, fd):
        head = bytearray()
        rest = b""
        while True:
            block = self._read(fd)
            if not block:
                self.header_error = "no header line"
                return
            newline = block.find(b"\n")
            if newline >= 0:
                head += block[:newline]
                rest = block[newline + 1:]
                break
            head += block
            if len(head) > MAX_HEADER_BYTES:
                self.header_error = "header line too long"
                return
        if len(head) > MAX_HEADER_BYTES:
            self.header_error = "header line too long"
            return
        normalizer = self._start(bytes(head))
        # The block that ended the header may hold nothing after it (the node wrote the header
        # on its own and the source came later): only an empty read is the end of the input.
        while True:
            if rest:
                self.raw_hash.update(rest)
                self.raw_size += len(rest)
                if normalizer is not None:
                    try:
                        normalizer.feed(rest)
                    except docs.NormalizationError as exc:
                        self.failure_code = exc.code
                        normalizer = None       # keep reading: the record counts every byte
            rest = self._read(fd)
            if not rest:
                break
        if normalizer is not None:
            try:
                self.normalized = normalizer.finish()
            except docs.NormalizationError as exc:
                self.failure_code = exc.code

    def _read(self, fd):
        block = os.read(fd, BLOCK_BYTES)
        self.stdin_hash.update(block)
        self.stdin_size += len(block)
        return block

    def _start(self, head):
        try:
            self.header = docs.parse_lenient(head)
            self.header_canonical = docs.canonical(self.header) == head
            query = self.header["request"]["query"]
            return docs.Normalizer(query["data_format"], query["limits"])
        except docs.NormalizationError as exc:
            self.failure_code = exc.code
        except Exception as exc:            # a header this child cannot use
            self.header_error = "%s: %s" % (type(exc).__name__, exc)
        return None

    def fields(self):
        return {
            "stdin_sha256": self.stdin_hash.hexdigest(),
            "stdin_size": self.stdin_size,
            "header": self.header,
            "header_canonical": self.header_canonical,
            "header_error": self.header_error,
            "raw_sha256": self.raw_hash.hexdigest(),
            "raw_size": self.raw_size,
            "normalization": self.failure_code or ("ok" if self.normalized else None),
        }


# ---------------------------------------------------------------------------
# Behaviours
# ---------------------------------------------------------------------------


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _text_bytes(text):
    return text.encode("utf-8", "surrogateescape")


def _apply(document, operations):
    for path, value in operations or ():
        parent = document
        for key in path[:-1]:
            parent = parent[key]
        if value == DELETE:
            if isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                del parent[path[-1]]
        else:
            parent[path[-1]] = value


def _reversed_keys(value):
    if isinstance(value, dict):
        return {key: _reversed_keys(value[key]) for key in sorted(value, reverse=True)}
    if isinstance(value, list):
        return [_reversed_keys(item) for item in value]
    return value


def encode(document, encoding="canonical"):
    """The result bytes in one of the ENCODINGS. Not validated: a patched
    document may hold a float or a lone surrogate on purpose, and the node
    must refuse the bytes (CRAWLER-RESULT-1)."""
    compact = {"sort_keys": True, "separators": (",", ":"), "ensure_ascii": False}
    if encoding == "canonical":
        text = json.dumps(document, **compact)
    elif encoding == "pretty":
        text = json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False)
    elif encoding == "unsorted":
        text = json.dumps(_reversed_keys(document), separators=(",", ":"), ensure_ascii=False)
    elif encoding == "newline":
        text = json.dumps(document, **compact) + "\n"
    elif encoding == "ascii":
        text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    else:
        raise ValueError("unknown result encoding %r" % encoding)
    return text.encode("utf-8", "surrogatepass")


def _normal(behaviour, given):
    if given is None or given.header is None or given.normalized is None:
        # The reference child's answer to a source it refuses (CRAWLER-NORM-3).
        code = (given and given.failure_code) or "CRAWLER_NORMALIZATION_FAILED"
        _write_all(ERROR_FD, docs.status_line(code, "failed"))
        return 1
    result = docs.build_result(given.header, given.normalized)
    _apply(result, behaviour.get("patch"))
    _apply(result, behaviour.get("add"))
    _write_all(RESULT_FD, encode(result, behaviour.get("encoding", "canonical")))
    _write_all(ERROR_FD, _text_bytes(behaviour.get("stderr", "")))
    return behaviour.get("exit", 0)


# The flood holds on after passing the bound, never exiting by itself: a node
# that only stops reading (or closes its end) is then caught waiting for the
# child's timeout, while one that kills the child at the bound ends at once.
FLOOD_HOLD_S = 3600


def _flood(fd, limit):
    """Write exactly limit + 1 bytes to fd (one past the node's bound), then hold."""
    left = limit + 1
    try:
        while left:
            n = min(left, BLOCK_BYTES)
            _write_all(fd, b"x" * n)
            left -= n
    except BrokenPipeError:
        pass
    _hold(FLOOD_HOLD_S)
    return 1


def _hold(seconds):
    """Sleep, deaf to the polite signals: only SIGKILL ends a held child, as
    CRAWLER-CHILD-3 and CRAWLER-STOP-1 require of a node (SIGKILL, the group)."""
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    time.sleep(seconds)


def main(behaviour):
    """Observe, read, then act as `behaviour` says; return the exit status."""
    if behaviour.get("deployment"):
        docs.deploy_values(behaviour["deployment"])
    record_path = behaviour.get("record")
    record = None
    if record_path:
        record = _observe()
        _write_record(record_path, record)      # in case a probe kills us
        record["probes"] = _probes()
        _write_record(record_path, record)
    given = None
    if behaviour.get("read_stdin", True):
        given = _Input()
        given.read(INPUT_FD)
        if record is not None:
            record.update(given.fields())
            _write_record(record_path, record)
    if behaviour.get("sleep_before"):
        time.sleep(behaviour["sleep_before"])

    mode = behaviour.get("mode", "normal")
    if mode == "normal":
        return _normal(behaviour, given)
    if mode == "fail":
        _write_all(ERROR_FD, _text_bytes(behaviour["stderr"]))
        return behaviour.get("exit", 1)
    if mode == "sleep":
        _hold(behaviour.get("seconds", 3600))
        return 0
    if mode == "flood":
        return _flood(RESULT_FD, docs.MAX_CRAWLER_RESULT_BYTES)
    if mode == "flood-stderr":
        return _flood(ERROR_FD, docs.MAX_CHILD_STDERR_BYTES)
    if mode == "segv":
        signal.signal(signal.SIGSEGV, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGSEGV)
        return 1                                # not reached
    if mode == "empty":
        return 0
    if mode == "raw":
        _write_all(RESULT_FD, behaviour["stdout"].encode("latin-1"))
        return behaviour.get("exit", 0)
    raise ValueError("unknown child mode %r" % mode)
