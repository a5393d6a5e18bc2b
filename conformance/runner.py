"""Start a node as a subprocess, watch it, and always reap it.

    proc = Runner.start(argv, env, cwd=None, pid1=True, memory_limit_bytes=None)
    proc.wait_for_line("stdout", lambda line: line.startswith("@lspo:"), SHORT_TIMEOUT_S)
    proc.signal(signal.SIGTERM)
    result = proc.wait(NODE_RUN_TIMEOUT_S)   # RunResult; never raises on a timeout

What the runner gives a check
-----------------------------
* **PID 1.** With ``pid1=True`` (and when `capabilities()` says the machine
  allows it) the node is the init process of a new PID namespace with its own
  ``/proc``, as in a container. The kernel then delivers a signal sent from
  outside the namespace only if the node installed a handler for it; SIGTERM
  to a node that relies on the default action does nothing. That is exactly
  the behaviour the cancellation clauses test, so `NodeProcess.signal` sends
  to the node's host pid and nothing else.
* **A memory limit.** With ``memory_limit_bytes`` the node runs in a fresh
  memory cgroup (v1 ``memory.limit_in_bytes`` plus ``memsw`` when present, or
  v2 ``memory.max``), created under the harness's own cgroup and removed
  after. Page cache is charged to the cgroup, as the kernel does by default.
  `RunResult.oom_killed` and `RunResult.memory_peak_bytes` report the outcome.
* **Logs.** stdout and stderr are read by two threads as they arrive, into
  lists of ``(time.monotonic(), line)`` (bytes decoded as UTF-8 with
  replacement). They are kept when the node is killed.
* **Measures.** Exit status (negative signal number when killed, the same
  with or without PID 1), wall time, stop latency (exit minus the first
  signal), peak RSS and CPU of the node and every descendant it reaped
  (``wait4``), and the node's argv and environment read from ``/proc`` right
  after exec, plus the argv of every descendant seen while it ran.
* **No leftovers.** ``wait(timeout)`` SIGKILLs the whole tree on a timeout;
  processes a node leaves behind after it exits are killed and listed in
  `RunResult.leftover`; `reap_all()` runs at interpreter exit.

Why not unshare(1)
------------------
``unshare --pid --fork --mount-proc`` makes the node PID 1 but reports its
exit badly: util-linux 2.38 exits 1 when the child was SIGKILLed (its attempt
to re-raise SIGKILL fails), so an OOM kill reads as "exit 1, transient". The
runner instead starts a tiny launcher (`_LAUNCHER`, Python, ``ctypes``) that
does the same three things - ``unshare(CLONE_NEWPID|CLONE_NEWNS)``, fork,
mount a private ``/proc`` - then joins the memory cgroup and execs the node in
the child. The launcher reports the node's host pid once exec succeeded, and
the node's exact wait status and ``rusage`` when it ends, over a pipe; it
then exits the same way the node did. So ``exit_code`` is the node's own:
``n`` for ``exit(n)``, ``-n`` for death by signal ``n``, in both modes.
The launcher also sets the node's parent-death signal to SIGKILL, so a node
cannot outlive a killed launcher, and it SIGKILLs the node when the harness
dies (the status pipe's read end closes), so a node cannot outlive a killed
harness either. Launchers are normally forks of one small fork server
(`_FORK_SERVER`) rather than new interpreters: the same code, without the
interpreter start that a run with hundreds of nodes would pay each time.
"""

import atexit
import collections
import errno
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

from conformance.timeouts import (POLL_INTERVAL_S, PROC_SAMPLE_INTERVAL_S,
                                  REAP_TIMEOUT_S, SHORT_TIMEOUT_S, Deadline, current_check, node_hung)

# A node that used no CPU for this long is idle: once the hang breaker has
# tripped (conformance/timeouts.py), a wait for an idle node is cut short.
WORKING_WINDOW_S = 1.0
# Bytes kept per captured stream; the rest is read and dropped (and the
# result says so), so a node that floods its output cannot exhaust the harness.
MAX_CAPTURE_BYTES = 64 << 20
# Longest line kept as one entry; a longer one is split into entries.
MAX_LINE_BYTES = 1 << 20


class HarnessError(RuntimeError):
    """The runner itself failed (a launcher that did not start, a process
    that survived SIGKILL). A check that meets one is ERROR, never FAIL."""


class CapabilityUnavailable(Exception):
    """This machine cannot give what the check asked for (PID 1, a memory
    cgroup). The checks framework reports the check as SKIP with `reason`."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


# --------------------------------------------------------------------------
# The launcher: runs as `python3 -I -S -c _LAUNCHER STATUS_FD MODE PROCS -- ARGV`
# MODE is "pid1" or "plain"; PROCS is a cgroup.procs path or "".
# Status lines: "pid N T_EXEC" | "error TEXT" | "exit STATUS MAXRSS_KIB UTIME STIME T_EXIT".
# --------------------------------------------------------------------------
_LAUNCHER = r'''
import os, signal, sys, time
fd = int(sys.argv[1]); mode = sys.argv[2]; procs = sys.argv[3]; argv = sys.argv[5:]
os.set_inheritable(fd, False)
def report(text):
    os.write(fd, (text.replace("\n", " ") + "\n").encode("utf-8", "replace"))
if mode == "pid1":
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x20000000 | 0x00020000) != 0:  # CLONE_NEWPID | CLONE_NEWNS
        report("error unshare(CLONE_NEWPID|CLONE_NEWNS): " + os.strerror(ctypes.get_errno()))
        os._exit(127)
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    try:
        os.close(r)
        if procs:
            with open(procs, "w") as handle:
                handle.write("0")
        if mode == "pid1":
            MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
            if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
                raise OSError(ctypes.get_errno(), "mount --make-rprivate /")
            if libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) != 0:
                raise OSError(ctypes.get_errno(), "mount -t proc proc /proc")
            libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
        else:
            try:
                import ctypes
                ctypes.CDLL(None).prctl(1, 9, 0, 0, 0)
            except Exception:
                pass
        for name in ("SIGPIPE", "SIGXFSZ"):  # Python ignores these; exec would keep that
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), signal.SIG_DFL)
        os.execvp(argv[0], argv)
    except BaseException as exc:
        os.write(w, ("%s: %s" % (type(exc).__name__, exc)).encode("utf-8", "replace"))
    os._exit(127)
os.close(w)
failure = b""
while True:
    chunk = os.read(r, 4096)
    if not chunk:
        break
    failure += chunk
os.close(r)
if failure:
    os.waitpid(pid, 0)
    report("error exec: " + failure.decode("utf-8", "replace"))
    os._exit(127)
report("pid %d %r" % (pid, time.monotonic()))
# Wait for the node while watching the harness: the harness holds the read end
# of the status pipe until it has reaped this launcher, so POLLERR on our end
# means it died first, and the node must not outlive it. (No thread: a process
# that called unshare(CLONE_NEWPID) cannot create threads.)
import select
wake_read, wake_write = os.pipe()
os.set_blocking(wake_write, False)
signal.set_wakeup_fd(wake_write)
signal.signal(signal.SIGCHLD, lambda signum, frame: None)
poller = select.poll()
poller.register(fd, select.POLLERR)
poller.register(wake_read, select.POLLIN)
while True:
    try:
        done, status, usage = os.wait4(pid, os.WNOHANG)
    except InterruptedError:
        continue
    if done:
        break
    for ready, events in poller.poll():
        if ready == fd and events & (select.POLLERR | select.POLLHUP):
            os.kill(pid, signal.SIGKILL)
            poller.unregister(fd)
        elif ready == wake_read:
            os.read(wake_read, 512)
try:
    report("exit %d %d %r %r %r" % (status, usage.ru_maxrss, usage.ru_utime, usage.ru_stime, time.monotonic()))
except OSError:
    pass
if os.WIFSIGNALED(status):
    import resource
    number = os.WTERMSIG(status)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if number not in (signal.SIGKILL, signal.SIGSTOP):
        signal.signal(number, signal.SIG_DFL)
    os.kill(os.getpid(), number)
    os._exit(128 + number)
os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 127)
'''


def _launcher_argv(status_fd, mode, procs, argv):
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(status_fd), mode, procs or "", "--"] + list(argv)


# --------------------------------------------------------------------------
# The fork server: launchers without a new interpreter each
# --------------------------------------------------------------------------
# A launcher started as a new interpreter spends about 20 ms of CPU before it
# does anything, and a conformance run starts hundreds of nodes. So one small,
# single-threaded fork server is started once per harness process, and each
# launcher is a fork of it that runs _LAUNCHER in-process: the same code, the
# same status pipe, a fresh session. A request is one SOCK_SEQPACKET message
# (JSON: argv, env, cwd, mode, procs) carrying four descriptors (stdin,
# stdout, stderr, status); the answer is the launcher's pid. It reaps each
# launcher as soon as it exits, and the harness learns a launcher's end from
# its status pipe (the CPU of launchers and their nodes adds up in the
# server's children's times: `forked_nodes_cpu_s`). It exits when its socket
# closes, which happens when the harness does, however the harness ends. When
# it cannot serve (gone, or a request it cannot take), the harness starts the
# launcher as before.
_FORK_SERVER = r'''
import ctypes, json, os, resource, select, signal, socket, sys, time
launcher = compile(sys.argv[2], "<launcher>", "exec")
server = socket.socket(fileno=int(sys.argv[1]))
def reap(signum, frame):  # reaped here, so their CPU adds up in this process's children's times
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass
signal.signal(signal.SIGCHLD, reap)
while True:
    try:
        message, fds, _flags, _address = socket.recv_fds(server, 1 << 20, 4)
    except InterruptedError:
        continue
    if not message:
        os._exit(0)
    pid = os.fork()
    if pid == 0:
        try:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            server.close()
            os.setsid()
            for target, fd in enumerate(fds[:3]):
                os.dup2(fd, target)
            for fd in fds[:3]:
                if fd > 2:
                    os.close(fd)
            request = json.loads(message)
            if request["cwd"]:
                os.chdir(request["cwd"])
            os.environ.clear()
            os.environ.update(request["env"])
            sys.argv = ["-c", str(fds[3]), request["mode"], request["procs"], "--"] + request["argv"]
            exec(launcher, {"__name__": "__main__"})
        except BaseException as exc:
            try:
                os.write(fds[3], ("error fork server: %s: %s\n" % (type(exc).__name__, exc)).encode("utf-8", "replace"))
            except Exception:
                pass
        os._exit(127)
    for fd in fds:
        os.close(fd)
    try:
        server.sendall(b"%d" % pid)
    except OSError:
        os._exit(0)
'''


# Largest request sent to the fork server; a larger environment (a check that
# passes an oversized variable) goes the old way. Well under the socket's
# send buffer, which bounds one SOCK_SEQPACKET message.
MAX_FORK_REQUEST_BYTES = 64 << 10


class _ForkServer:
    """The harness's end of the fork server; `spawn` is safe from any thread.

    A launcher's pid is free again as soon as it exits, since the server, not
    the harness, reaps it. The harness signals a launcher only while waiting
    for it (`kill` signals its group after REAP_TIMEOUT_S without an end), so
    a reused pid would take the pid counter wrapping within that window.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._sock = None
        self._proc = None

    def _start(self):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _FORK_SERVER, str(theirs.fileno()), _LAUNCHER],
                pass_fds=(theirs.fileno(),), env={}, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._sock = ours

    def _stop(self):
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._proc is not None:
            try:
                self._proc.wait(SHORT_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None

    def spawn(self, argv, env, cwd, mode, procs, fds):
        """The pid of a launcher for argv, or None when the fork server could
        not take the request (the caller then starts the launcher itself).
        A None after the request went out means the server died with it: the
        caller's status pipe closes, and a launcher that did start kills its
        node when it sees that."""
        try:  # str as Popen would pass them (bytes and paths decoded as the file system does)
            message = json.dumps({"argv": [os.fsdecode(a) for a in argv],
                                  "env": dict((os.fsdecode(k), os.fsdecode(v)) for k, v in env.items()),
                                  "cwd": os.fsdecode(cwd) if cwd else "",
                                  "mode": mode, "procs": procs or ""}).encode("utf-8")
        except (TypeError, ValueError):
            return None
        if len(message) > MAX_FORK_REQUEST_BYTES:
            return None
        with self._lock:
            try:
                if self._sock is None:
                    self._start()
                socket.send_fds(self._sock, [message], fds)
            except OSError as exc:
                if exc.errno != errno.EMSGSIZE:  # too large for this socket: only this request goes the old way
                    self._stop()
                return None
            except BaseException:
                self._stop()
                raise
            try:
                reply = self._sock.recv(64)
                if not reply:
                    raise OSError("the fork server ended")
                return int(reply)
            except BaseException as exc:
                # The server is gone, or this thread was interrupted with a reply
                # still queued: either way the socket cannot be trusted again.
                self._stop()
                if isinstance(exc, (OSError, ValueError)):
                    return None
                raise

    def children_cpu_s(self):
        """CPU seconds of every launcher (with its node) the server has reaped so far."""
        proc = self._proc
        if proc is None:
            return 0.0
        try:
            with open("/proc/%d/stat" % proc.pid, encoding="ascii") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            return (int(fields[13]) + int(fields[14])) / float(os.sysconf("SC_CLK_TCK"))  # cutime, cstime
        except (OSError, ValueError, IndexError):
            return 0.0


_fork_server = _ForkServer()


def forked_nodes_cpu_s():
    """CPU seconds of the launchers (each with its node) the fork server has
    reaped: they are not this process's children, so RUSAGE_CHILDREN misses them."""
    return _fork_server.children_cpu_s()


# --------------------------------------------------------------------------
# Capabilities
# --------------------------------------------------------------------------
class Capability:
    """One capability: ``value`` (True/False, or "v1"/"v2"/None for the
    cgroup) and ``reason`` (why not, or how). Truthy when available;
    unpacks as ``value, reason``."""

    __slots__ = ("value", "reason")

    def __init__(self, value, reason):
        self.value, self.reason = value, reason

    def __bool__(self):
        return bool(self.value)

    def __iter__(self):
        return iter((self.value, self.reason))

    def __repr__(self):
        return "Capability(%r, %r)" % (self.value, self.reason)


class Capabilities:
    """What this machine allows: ``pid1`` and ``cgroup`` (`Capability`)."""

    def __init__(self, pid1, cgroup, cgroup_parent):
        self.pid1 = pid1
        self.cgroup = cgroup
        self.cgroup_parent = cgroup_parent  # directory new cgroups are made in

    def __repr__(self):
        return "Capabilities(pid1=%r, cgroup=%r)" % (self.pid1, self.cgroup)


_caps_lock = threading.Lock()
_caps = None


def capabilities():
    """Detect once (cached) whether PID 1 and a memory cgroup are available."""
    global _caps
    with _caps_lock:
        if _caps is None:
            pid1 = _probe_pid1()
            kind, reason, parent = _probe_cgroup()
            _caps = Capabilities(pid1, Capability(kind, reason), parent)
        return _caps


def _probe_pid1():
    if not sys.platform.startswith("linux"):
        return Capability(False, "PID namespaces need Linux (this is %s)" % sys.platform)
    code = "import os, sys; sys.exit(0 if os.getpid() == 1 else 3)"
    read_fd, write_fd = os.pipe()
    try:
        proc = subprocess.Popen(_launcher_argv(write_fd, "pid1", "", [sys.executable, "-I", "-S", "-c", code]),
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, pass_fds=(write_fd,), start_new_session=True)
    except OSError as exc:
        os.close(read_fd)
        os.close(write_fd)
        return Capability(False, "could not start the launcher: %s" % exc)
    os.close(write_fd)
    try:
        _, errors = proc.communicate(timeout=SHORT_TIMEOUT_S)
        status = proc.returncode
    except subprocess.TimeoutExpired:
        _kill_quietly(-proc.pid)
        _, errors = proc.communicate()
        status = None
    errors = errors.decode("utf-8", "replace").strip().splitlines()
    with os.fdopen(read_fd, "rb") as handle:
        report = handle.read().decode("utf-8", "replace")
    for line in report.splitlines():
        if line.startswith("error "):
            return Capability(False, "PID namespace refused: %s" % line[6:])
    if status == 0:
        return Capability(True, "unshare(CLONE_NEWPID) with a private /proc works")
    if status is None:
        return Capability(False, "the PID namespace probe did not finish in %.0f s" % SHORT_TIMEOUT_S)
    return Capability(False, "the PID namespace probe exited %d%s" % (status, ": " + errors[-1] if errors else ""))


def _read(path):
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def _write(path, text):
    with open(path, "w", encoding="ascii") as handle:
        handle.write(text)


def _mounts():
    """(mount point, root, fstype, super options) for every cgroup mount."""
    found = []
    try:
        lines = _read("/proc/self/mountinfo").splitlines()
    except OSError:
        return found
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or not tail[0].startswith("cgroup"):
            continue
        unescape = lambda s: s.replace("\\040", " ")
        found.append((unescape(fields[4]), unescape(fields[3]), tail[0], tail[2].split(",")))
    return found


def _own_cgroup_dirs():
    """Candidate directories of this process's own memory cgroup: [(kind, dir)]."""
    try:
        lines = _read("/proc/self/cgroup").splitlines()
    except OSError:
        return []
    v1_path = v2_path = None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            v2_path = parts[2]
        elif "memory" in parts[1].split(","):
            v1_path = parts[2]
    result = []
    for mount_point, root, fstype, options in _mounts():
        if fstype == "cgroup" and "memory" in options and v1_path is not None:
            kind, path = "v1", v1_path
        elif fstype == "cgroup2" and v2_path is not None:
            kind, path = "v2", v2_path
        else:
            continue
        if root != "/" and path.startswith(root):
            path = path[len(root):]
        result.append((kind, os.path.join(mount_point, path.lstrip("/"))))
    result.sort(key=lambda item: item[0])  # v1 first when a hybrid has memory there
    return result


def _probe_cgroup():
    candidates = _own_cgroup_dirs()
    if not candidates:
        return None, "no memory cgroup hierarchy is mounted (no v1 memory controller, no cgroup2)", None
    reasons = []
    for kind, parent in candidates:
        probe = os.path.join(parent, "conformance-probe-%d-%s" % (os.getpid(), uuid.uuid4().hex[:8]))
        try:
            if kind == "v2":
                _enable_v2_memory(parent)
            os.mkdir(probe)
        except OSError as exc:
            reasons.append("%s: cannot create a cgroup under %s (%s)" % (kind, parent, exc.strerror))
            continue
        try:
            limit_file = "memory.limit_in_bytes" if kind == "v1" else "memory.max"
            path = os.path.join(probe, limit_file)
            if not os.path.exists(path):
                reasons.append("%s: %s has no %s (memory controller not enabled)" % (kind, parent, limit_file))
                continue
            _write(path, str(64 << 20))
            return kind, "memory cgroup %s under %s" % (kind, parent), parent
        except OSError as exc:
            reasons.append("%s: cannot set a limit under %s (%s)" % (kind, parent, exc.strerror))
        finally:
            try:
                os.rmdir(probe)
            except OSError:
                pass
    return None, "; ".join(reasons), None


def _enable_v2_memory(parent):
    control = os.path.join(parent, "cgroup.subtree_control")
    try:
        if "memory" in _read(control).split():
            return
        _write(control, "+memory")
    except OSError:
        pass  # the mkdir/limit probe reports the real reason


class _Cgroup:
    """A fresh memory cgroup for one node run."""

    def __init__(self, kind, parent, limit_bytes):
        self.kind, self.limit_bytes = kind, limit_bytes
        self.dir = os.path.join(parent, "conformance-%d-%s" % (os.getpid(), uuid.uuid4().hex[:12]))
        os.mkdir(self.dir)
        try:
            if kind == "v1":
                _write(self._file("memory.limit_in_bytes"), str(limit_bytes))
                if os.path.exists(self._file("memory.memsw.limit_in_bytes")):
                    try:  # no swap either: the limit is on memory + swap
                        _write(self._file("memory.memsw.limit_in_bytes"), str(limit_bytes))
                    except OSError:
                        pass
            else:
                _write(self._file("memory.max"), str(limit_bytes))
                if os.path.exists(self._file("memory.swap.max")):
                    _write(self._file("memory.swap.max"), "0")
        except OSError:
            self.remove()
            raise

    def _file(self, name):
        return os.path.join(self.dir, name)

    @property
    def procs_file(self):
        return self._file("cgroup.procs")

    def pids(self):
        try:
            return [int(x) for x in _read(self.procs_file).split()]
        except OSError:
            return []

    def _counter(self, filename, key):
        try:
            for line in _read(self._file(filename)).splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[0] == key:
                    return int(parts[1])
        except (OSError, ValueError):
            pass
        return None

    def oom_kills(self):
        """OOM kills in this cgroup, or None when the kernel does not count them."""
        if self.kind == "v1":
            return self._counter("memory.oom_control", "oom_kill")
        return self._counter("memory.events", "oom_kill")

    def hit_limit(self):
        if self.kind == "v1":
            try:
                return int(_read(self._file("memory.failcnt")).strip()) > 0
            except (OSError, ValueError):
                return False
        count = self._counter("memory.events", "max")
        return bool(count)

    def peak_bytes(self):
        name = "memory.max_usage_in_bytes" if self.kind == "v1" else "memory.peak"
        try:
            return int(_read(self._file(name)).strip())
        except (OSError, ValueError):
            return None

    def remove(self):
        deadline = time.monotonic() + REAP_TIMEOUT_S
        while True:
            for pid in self.pids():
                _kill_quietly(pid)
            try:
                os.rmdir(self.dir)
                return True
            except FileNotFoundError:
                return True
            except OSError:
                if time.monotonic() > deadline:
                    return False
                time.sleep(POLL_INTERVAL_S)


# --------------------------------------------------------------------------
# /proc helpers
# --------------------------------------------------------------------------
def _kill_quietly(pid, signum=signal.SIGKILL):
    """kill(pid) (or killpg when pid < 0), ignoring a process already gone."""
    try:
        if pid < 0:
            os.killpg(-pid, signum)
        else:
            os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def read_proc(path):
    """The bytes of a /proc file (raises OSError when it is gone).

    The samplers read /proc every PROC_SAMPLE_INTERVAL_S for every running node (a
    session run reads some 70,000 of these files), so with os.open and os.read: a
    Python file object costs nearly twice the CPU of the read itself."""
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        os.close(fd)


def _children(pid):
    """pid's children, from every one of its threads (each thread's forks are listed under it)."""
    kids = []
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return kids
    for tid in tasks:
        try:
            kids.extend(int(x) for x in read_proc("/proc/%d/task/%s/children" % (pid, tid)).split())
        except (OSError, ValueError):
            pass
    return kids


def _readable(fd, timeout):
    """True when fd has data (or EOF) within timeout seconds. poll(), not
    select(): a harness running many checks at once holds descriptors above
    1023, which select() refuses."""
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    return bool(poller.poll(int(timeout * 1000) + 1 if timeout > 0 else 0))


def descendants(pid):
    """Every live descendant of pid (children first), from /proc."""
    seen, queue = [], [pid]
    while queue:
        for kid in _children(queue.pop(0)):
            if kid not in seen:
                seen.append(kid)
                queue.append(kid)
    return seen


def _stat_times(pid):
    """(utime + stime, cutime + cstime) of pid in clock ticks, or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid, encoding="ascii", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])
    except (OSError, ValueError, IndexError):
        return None


def tree_cpu_s(pid):
    """User + system CPU seconds used so far by pid, every live descendant, and
    every child any of them has reaped; (seconds, process count), or None when
    pid itself is gone. A descendant that was reparented out of the tree (no
    PID namespace) takes its CPU with it."""
    own = _stat_times(pid)
    if own is None:
        return None
    ticks, count = own[0] + own[1], 1
    for kid in descendants(pid):
        times = _stat_times(kid)
        if times is not None:
            ticks += times[0] + times[1]
            count += 1
    return ticks / float(os.sysconf("SC_CLK_TCK")), count


def read_cmdline(pid):
    """argv of pid as a list of str, or None when it is gone."""
    try:
        raw = read_proc("/proc/%d/cmdline" % pid)
    except OSError:
        return None
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0")[:-1]] if raw else []


def proc_alive(pid):
    """pid runs and is not a zombie (a killed child waiting to be reaped is dead)."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2:][:1] not in ("Z", "X")


def proc_field(pid, name):
    """The value of one line of /proc/<pid>/status ("Seccomp", "PPid", ...), or None."""
    try:
        with open("/proc/%d/status" % pid) as handle:
            for line in handle:
                key, _sep, value = line.partition(":")
                if key == name:
                    return value.strip()
    except OSError:
        return None
    return None


def read_environ(pid):
    """Initial environment of pid as a dict, or None when unreadable."""
    try:
        with open("/proc/%d/environ" % pid, "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    env = {}
    for item in raw.split(b"\0"):
        if item:
            key, _, value = item.decode("utf-8", "replace").partition("=")
            env[key] = value
    return env


def session_members(sid):
    """Live pids whose session id is sid (the runner starts each node in
    its own session, so this finds what a node left behind)."""
    found, wanted = [], str(sid).encode("ascii")
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            stat = read_proc("/proc/%s/stat" % name)
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        # state ppid pgrp session ...
        if len(fields) > 3 and fields[3] == wanted and fields[0] != b"Z":
            found.append(int(name))
    return found


# --------------------------------------------------------------------------
# Results and processes
# --------------------------------------------------------------------------
class RunResult:
    """What one node run did. Times are time.monotonic() seconds."""

    def __init__(self, **fields):
        self.argv = None
        self.exit_code = None          # n for exit(n); -n for death by signal n
        self.stdout = ""
        self.stderr = ""
        self.stdout_lines = []         # [(t, line)]
        self.stderr_lines = []
        self.truncated = False         # a stream exceeded MAX_CAPTURE_BYTES
        self.t_start = None            # the node's exec
        self.t_exit = None             # the node's exit, as its parent saw it
        self.wall_s = None             # t_exit - t_start
        self.t_signal = None           # first signal sent through NodeProcess.signal
        self.signals = []              # [(t, signum)]
        self.stop_latency_s = None     # t_exit - t_signal (negative: the node had exited already)
        self.maxrss_bytes = None       # peak RSS of the node and every descendant it reaped
        self.cpu_s = None              # user + system CPU of the same tree
        self.oom_killed = False
        self.memory_limit_bytes = None
        self.memory_peak_bytes = None  # cgroup peak, page cache included
        self.timed_out = False
        self.killed = False            # the harness SIGKILLed the tree
        self.is_pid1 = False
        self.host_pid = None
        self.cmdline_snapshot = None   # the node's argv read from /proc after exec
        self.environ_snapshot = None   # the node's environment read from /proc after exec
        self.seen_cmdlines = {}        # pid -> argv of the node and descendants seen
        self.leftover = []             # [(pid, argv)] processes left after the node exited (killed)
        self.__dict__.update(fields)

    def __repr__(self):
        return ("RunResult(exit_code=%r, timed_out=%r, wall_s=%.3f, maxrss_bytes=%r, oom_killed=%r)"
                % (self.exit_code, self.timed_out, self.wall_s or 0.0, self.maxrss_bytes, self.oom_killed))

    def describe(self):
        """One line for transcripts."""
        parts = ["exit %s" % self.exit_code]
        if self.timed_out:
            parts.append("timed out (killed)")
        if self.oom_killed:
            parts.append("OOM-killed")
        if self.stop_latency_s is not None:
            parts.append("stop latency %.3f s" % self.stop_latency_s)
        if self.wall_s is not None:
            parts.append("wall %.3f s" % self.wall_s)
        if self.maxrss_bytes:
            parts.append("peak RSS %.1f MiB" % (self.maxrss_bytes / 1048576.0))
        if self.memory_peak_bytes:
            parts.append("cgroup peak %.1f MiB" % (self.memory_peak_bytes / 1048576.0))
        if self.leftover:
            parts.append("%d process(es) left behind" % len(self.leftover))
        return ", ".join(parts)


_live_lock = threading.Lock()
_live = set()
_refusing = None   # why no node may start now (an interrupted run), or None


def refuse_new_nodes(reason):
    """From now on Runner.start raises HarnessError(reason); None allows starts again."""
    global _refusing
    _refusing = reason


class _Stream:
    """One captured output stream."""

    def __init__(self, name, pipe, cond):
        self.name, self.pipe, self.cond = name, pipe, cond
        self.lines = []
        self.raw = []
        self.size = 0
        self.truncated = False
        self.closed = False
        self.thread = threading.Thread(target=self._read, name="conformance-%s" % name, daemon=True)
        self.thread.start()

    def _read(self):
        pipe = self.pipe
        try:
            while True:
                chunk = pipe.readline(MAX_LINE_BYTES)
                if not chunk:
                    break
                now = time.monotonic()
                if self.size + len(chunk) > MAX_CAPTURE_BYTES:
                    self.truncated = True
                    continue
                self.size += len(chunk)
                text = chunk.decode("utf-8", "replace")
                with self.cond:
                    self.raw.append(text)
                    self.lines.append((now, text[:-1] if text.endswith("\n") else text))
                    self.cond.notify_all()
        except (OSError, ValueError):
            pass
        finally:
            with self.cond:
                self.closed = True
                self.cond.notify_all()
            try:
                pipe.close()
            except OSError:
                pass

    def text(self):
        with self.cond:
            return "".join(self.raw)


class NodeProcess:
    """A running node. Create with `Runner.start`."""

    def __init__(self, argv, env, cwd, pid1, cgroup):
        self.argv = list(argv)
        self.env = dict(env)
        self.cwd = cwd
        self.is_pid1 = pid1
        self.memory_limit_bytes = cgroup.limit_bytes if cgroup else None
        self._cgroup = cgroup
        self._cond = threading.Condition()
        self._done = threading.Event()
        self._result = None
        self._killed = False
        self._timed_out = False
        self._cpu_samples = collections.deque()   # (time, tree CPU s): see _working
        self.signals = []
        self.seen_cmdlines = {}
        self.cmdline_snapshot = None
        self.environ_snapshot = None
        self._pidfd = None
        self._signal_lock = threading.Lock()
        self._reaped = False
        # The node is always forked by the small launcher, never by the harness:
        # exec keeps the pre-exec RSS high-water mark, so a fork of the (large,
        # threaded) harness would inflate the node's ru_maxrss.
        mode, procs = "pid1" if pid1 else "plain", cgroup.procs_file if cgroup else ""
        self.t_launch = self.t_start = time.monotonic()
        self._popen = None
        launched = self._launch_forked(mode, procs) or self._launch_popen(mode, procs)
        self.launcher_pid, stdout, stderr, status_read = launched
        with _live_lock:
            _live.add(self)
        self._streams = {"stdout": _Stream("stdout", stdout, self._cond),
                         "stderr": _Stream("stderr", stderr, self._cond)}
        self._status_fd = status_read
        self._status_buf = b""
        try:
            self.host_pid = self._handshake()
        except BaseException:
            self.kill()
            self._reap_direct(REAP_TIMEOUT_S)
            os.close(self._status_fd)
            with _live_lock:
                _live.discard(self)
            raise
        if hasattr(os, "pidfd_open"):
            try:
                self._pidfd = os.pidfd_open(self.host_pid)
            except OSError:
                self._pidfd = None
        self.cmdline_snapshot = read_cmdline(self.host_pid)
        self.environ_snapshot = read_environ(self.host_pid)
        if self.cmdline_snapshot is not None:
            self.seen_cmdlines[self.host_pid] = self.cmdline_snapshot
        self._waiter = threading.Thread(target=self._wait_thread, name="conformance-wait", daemon=True)
        self._waiter.start()
        self._sampler = threading.Thread(target=self._sample_thread, name="conformance-proc", daemon=True)
        self._sampler.start()

    # ---- start-up -------------------------------------------------------
    def _launch_forked(self, mode, procs):
        """(launcher pid, stdout, stderr, status fd) from the fork server, or None."""
        fds = list(os.pipe()) + list(os.pipe()) + list(os.pipe())  # stdout r/w, stderr r/w, status r/w
        stdin = os.open(os.devnull, os.O_RDWR)  # as subprocess.DEVNULL opens it
        pid = None
        try:
            pid = _fork_server.spawn(self.argv, self.env, self.cwd, mode, procs, [stdin, fds[1], fds[3], fds[5]])
        finally:
            for fd in (stdin, fds[1], fds[3], fds[5]):
                os.close(fd)
            if pid is None:  # closing the status pipe also tells a launcher that did start to kill its node
                for fd in (fds[0], fds[2], fds[4]):
                    os.close(fd)
        if pid is None:
            return None
        return pid, os.fdopen(fds[0], "rb"), os.fdopen(fds[2], "rb"), fds[4]

    def _launch_popen(self, mode, procs):
        """(launcher pid, stdout, stderr, status fd) from a launcher started as a new interpreter."""
        status_read, status_write = os.pipe()
        try:
            self._popen = subprocess.Popen(_launcher_argv(status_write, mode, procs, self.argv), env=self.env,
                                           cwd=self.cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, pass_fds=(status_write,),
                                           start_new_session=True)
        except BaseException:
            os.close(status_read)
            raise
        finally:
            os.close(status_write)
        return self._popen.pid, self._popen.stdout, self._popen.stderr, status_read

    def _status_lines(self, timeout):
        """Read complete status lines from the launcher within timeout."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._status_buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise HarnessError("the launcher did not report within %.0f s" % timeout)
            if not _readable(self._status_fd, left):
                continue
            chunk = os.read(self._status_fd, 4096)
            if not chunk:
                raise HarnessError("the launcher exited before starting the node")
            self._status_buf += chunk
        line, _, self._status_buf = self._status_buf.partition(b"\n")
        return line.decode("utf-8", "replace")

    def _handshake(self):
        line = self._status_lines(SHORT_TIMEOUT_S)
        if line.startswith("pid "):
            parts = line.split()
            self.t_start = float(parts[2])  # the node's exec, not the launcher's start
            return int(parts[1])
        if line.startswith("error "):
            raise HarnessError("could not start %s: %s" % (self.argv[0], line[6:]))
        raise HarnessError("unexpected launcher report %r" % line)

    def _read_exit_report(self):
        """The launcher's exit line, read after the launcher was reaped."""
        data = self._status_buf
        try:
            while True:
                if not _readable(self._status_fd, 0):
                    break
                chunk = os.read(self._status_fd, 4096)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        for line in data.decode("utf-8", "replace").splitlines():
            parts = line.split()
            if len(parts) == 6 and parts[0] == "exit":
                try:
                    return (int(parts[1]), int(parts[2]), float(parts[3]) + float(parts[4]), float(parts[5]))
                except ValueError:
                    return None
        return None

    # ---- background threads ---------------------------------------------
    def _sample_thread(self):
        while not self._done.wait(PROC_SAMPLE_INTERVAL_S):
            for pid in [self.host_pid] + descendants(self.host_pid):
                if pid not in self.seen_cmdlines:
                    argv = read_cmdline(pid)
                    if argv:
                        self.seen_cmdlines[pid] = argv

    def _reap_direct(self, timeout=None):
        """wait4 on the direct child; returns (status, rusage) or None.

        A launcher from the fork server is not our child (the kernel reaps
        it): its end is the end of its status pipe, read here to EOF."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if self._popen is None:
            while self._status_fd is not None:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return None
                if not _readable(self._status_fd, left if left is not None else 3600):
                    continue
                chunk = os.read(self._status_fd, 4096)
                if not chunk:
                    break
                self._status_buf += chunk
            # Its descriptors close as it exits, a moment before it is gone.
            gone_by = time.monotonic() + REAP_TIMEOUT_S if deadline is None else deadline
            while time.monotonic() < gone_by:
                try:
                    os.kill(self.launcher_pid, 0)
                except ProcessLookupError:
                    break
                except OSError:
                    break
                time.sleep(POLL_INTERVAL_S)
            return None
        while True:
            try:
                flags = 0 if deadline is None else os.WNOHANG
                pid, status, usage = os.wait4(self.launcher_pid, flags)
            except ChildProcessError:
                return None
            if pid:
                self._popen.returncode = os.waitstatus_to_exitcode(status)
                return status, usage
            if time.monotonic() > deadline:
                return None
            time.sleep(POLL_INTERVAL_S)

    def _wait_thread(self):
        reaped = self._reap_direct()
        t_reaped = time.monotonic()
        exit_report = self._read_exit_report() if self._status_fd is not None else None
        if self._status_fd is not None:
            os.close(self._status_fd)
            self._status_fd = None
        with self._signal_lock:  # signal() must never use a closed (or reused) descriptor
            if self._pidfd is not None:
                os.close(self._pidfd)
                self._pidfd = None
            self._reaped = True
        result = RunResult(argv=self.argv, is_pid1=self.is_pid1, host_pid=self.host_pid, t_start=self.t_start,
                           memory_limit_bytes=self.memory_limit_bytes)
        if exit_report is not None:
            status, maxrss_kib, cpu, t_exit = exit_report
            result.exit_code = os.waitstatus_to_exitcode(status)
            result.maxrss_bytes, result.cpu_s, result.t_exit = maxrss_kib * 1024, cpu, t_exit
        elif reaped is not None:
            status, usage = reaped
            result.exit_code = os.waitstatus_to_exitcode(status)
            result.maxrss_bytes = usage.ru_maxrss * 1024
            result.cpu_s = usage.ru_utime + usage.ru_stime
            result.t_exit = t_reaped
        else:
            result.t_exit = t_reaped
        # Whatever the node left in its session (outside a PID namespace the
        # kernel does not clean up for us) is killed and listed.
        # Processes killed by the harness itself (a timeout) are not counted.
        stragglers = session_members(self.launcher_pid)
        if self._cgroup is not None:
            stragglers += [pid for pid in self._cgroup.pids() if pid not in stragglers]
        for pid in stragglers:
            argv = read_cmdline(pid) or self.seen_cmdlines.get(pid)
            _kill_quietly(pid)
            if not self._killed:
                result.leftover.append((pid, argv))
        if self._cgroup is not None:
            kills = self._cgroup.oom_kills()
            if kills is not None:
                result.oom_killed = kills > 0
            else:
                result.oom_killed = result.exit_code == -signal.SIGKILL and not self._killed and self._cgroup.hit_limit()
            result.memory_peak_bytes = self._cgroup.peak_bytes()
            self._cgroup.remove()
        for stream in self._streams.values():
            stream.thread.join(SHORT_TIMEOUT_S)
        out, err = self._streams["stdout"], self._streams["stderr"]
        with self._cond:
            result.stdout, result.stderr = "".join(out.raw), "".join(err.raw)
            result.stdout_lines, result.stderr_lines = list(out.lines), list(err.lines)
        result.truncated = out.truncated or err.truncated
        result.wall_s = result.t_exit - self.t_start
        result.signals = list(self.signals)
        if self.signals:
            result.t_signal = self.signals[0][0]
            result.stop_latency_s = result.t_exit - result.t_signal
        result.timed_out, result.killed = self._timed_out, self._killed
        result.cmdline_snapshot, result.environ_snapshot = self.cmdline_snapshot, self.environ_snapshot
        result.seen_cmdlines = dict(self.seen_cmdlines)
        self._result = result
        with _live_lock:
            _live.discard(self)
        self._done.set()
        with self._cond:
            self._cond.notify_all()

    # ---- public API ------------------------------------------------------
    @property
    def stdout_lines(self):
        """Live list of (t_monotonic, line) read from stdout so far."""
        return self._streams["stdout"].lines

    @property
    def stderr_lines(self):
        """Live list of (t_monotonic, line) read from stderr so far."""
        return self._streams["stderr"].lines

    def running(self):
        """True until the node's process tree has been reaped."""
        return not self._done.is_set()

    def signal(self, signum):
        """Send signum to the node itself; the first one starts the stop-latency clock.
        Returns False when the node had already been reaped."""
        now = time.monotonic()
        with self._signal_lock:
            if self._reaped:
                return False
            try:
                if self._pidfd is not None:
                    signal.pidfd_send_signal(self._pidfd, signum)
                else:
                    os.kill(self.host_pid, signum)
            except OSError:
                return False
            self.signals.append((now, signum))
        return True

    def wait_for_line(self, stream, predicate, timeout, since=0):
        """True as soon as a line of `stream` ("stdout"/"stderr") at index >=
        since satisfies predicate; False on timeout or when the stream ended."""
        target = self._streams[stream]
        deadline = Deadline(timeout)
        index = since
        with self._cond:
            while True:
                while index < len(target.lines):
                    if predicate(target.lines[index][1]):
                        return True
                    index += 1
                if target.closed:
                    return False
                if deadline.over():
                    return False
                self._cond.wait(deadline.slice())

    def kill(self):
        """SIGKILL the whole tree: the node (and with it its PID namespace),
        every descendant, everything in its cgroup; then the launcher and
        the process group if the launcher has not exited within
        REAP_TIMEOUT_S (normally it reports the node's death and exits)."""
        if self._done.is_set():
            return
        self._killed = True
        victims = descendants(self.launcher_pid)  # before the kill reparents them
        if getattr(self, "host_pid", None) is not None:
            _kill_quietly(self.host_pid)
        for pid in victims:
            _kill_quietly(pid)
        if self._cgroup is not None:
            for pid in self._cgroup.pids():
                _kill_quietly(pid)
        if threading.current_thread() is getattr(self, "_waiter", None):
            return
        if getattr(self, "_waiter", None) is None or not self._done.wait(REAP_TIMEOUT_S):
            _kill_quietly(-self.launcher_pid)
            for pid in descendants(self.launcher_pid):
                _kill_quietly(pid)

    def _working(self):
        """True when the node's tree used CPU within the last WORKING_WINDOW_S
        (a hung node sleeps; a working one may wait a moment on a slow peer);
        at the first call, with nothing to compare, True as well."""
        now = tree_cpu_s(self.host_pid) if getattr(self, "host_pid", None) is not None else None
        if now is None:
            return False
        t = time.monotonic()
        samples = self._cpu_samples
        samples.append((t, now[0]))
        while len(samples) > 1 and samples[1][0] <= t - WORKING_WINDOW_S:
            samples.popleft()
        return len(samples) == 1 or now[0] > samples[0][1]

    def wait(self, timeout):
        """Wait for the node to exit; after timeout SIGKILL the tree
        (result.timed_out=True, logs kept). Raises HarnessError only when a
        killed process could not be reaped."""
        deadline = Deadline(timeout, busy=self._working)
        while not self._done.wait(deadline.slice()):
            if deadline.over():
                break
        if not self._done.is_set():
            self._timed_out = True
            if timeout > 0:  # wait(0) is the harness ending a run, not the node hanging
                node_hung()
            self.kill()
            if not self._done.wait(REAP_TIMEOUT_S + SHORT_TIMEOUT_S):
                raise HarnessError("pid %d did not exit %.0f s after SIGKILL" % (self.launcher_pid, REAP_TIMEOUT_S))
        return self._result

    @property
    def result(self):
        """The RunResult once the node was reaped, else None."""
        return self._result

    def stdout_text(self):
        return self._streams["stdout"].text()

    def stderr_text(self):
        return self._streams["stderr"].text()

    def __repr__(self):
        return "NodeProcess(host_pid=%r, is_pid1=%r, argv=%r)" % (getattr(self, "host_pid", None),
                                                                 self.is_pid1, self.argv)


# Node starts per check (keyed by the check the starting thread runs, timeouts.begin_check): the
# run's cost is mostly node starts (an interpreter start and the node file's compile each), so the
# report says how many each check paid and a check that starts more than it needs shows.
_starts_lock = threading.Lock()
_starts = collections.Counter()


def count_node_start():
    """Record one start of the node file (Runner.start does; so does any check that runs the node itself)."""
    with _starts_lock:
        _starts[current_check()] += 1


def take_node_starts(check_id):
    """The node starts counted for check_id so far, forgotten."""
    with _starts_lock:
        return _starts.pop(check_id, 0)


class Runner:
    """Starts nodes. `Runner.start` is the only entry point; every process it
    starts is tracked until reaped, and `reap_all` kills what is left."""

    @classmethod
    def start(cls, argv, env, cwd=None, pid1=True, memory_limit_bytes=None):
        """Start argv with exactly env (nothing inherited) and return a NodeProcess.

        pid1: True = as PID 1 when capabilities() allows, else as a plain
        child (proc.is_pid1 tells which); "require" = raise
        CapabilityUnavailable instead of falling back; False = plain child.
        memory_limit_bytes: run in a fresh memory cgroup with that limit;
        raises CapabilityUnavailable when no cgroup is writable.
        """
        if pid1 not in (True, False, "require"):
            raise ValueError("pid1 must be True, False or 'require'")
        if _refusing:
            raise HarnessError(_refusing)
        caps = capabilities() if (pid1 or memory_limit_bytes) else None
        as_pid1 = bool(pid1) and bool(caps.pid1)
        if pid1 == "require" and not as_pid1:
            raise CapabilityUnavailable("PID 1 unavailable: %s" % caps.pid1.reason)
        cgroup = None
        if memory_limit_bytes is not None:
            if not caps.cgroup:
                raise CapabilityUnavailable("memory cgroup unavailable: %s" % caps.cgroup.reason)
            try:
                cgroup = _Cgroup(caps.cgroup.value, caps.cgroup_parent, int(memory_limit_bytes))
            except OSError as exc:
                raise CapabilityUnavailable("could not create a memory cgroup: %s" % exc)
        count_node_start()
        try:
            return NodeProcess(argv, env, cwd, pid1=as_pid1, cgroup=cgroup)
        except BaseException:
            if cgroup is not None:
                cgroup.remove()
            raise


def start(argv, env, cwd=None, pid1=True, memory_limit_bytes=None):
    """Module-level alias of Runner.start."""
    return Runner.start(argv, env, cwd=cwd, pid1=pid1, memory_limit_bytes=memory_limit_bytes)


def live_processes():
    """NodeProcess objects not yet reaped."""
    with _live_lock:
        return list(_live)


def reap_all(timeout=REAP_TIMEOUT_S):
    """Kill and reap every node still running; returns how many were killed."""
    victims = live_processes()
    for proc in victims:
        proc.kill()
    for proc in victims:
        try:
            proc.wait(timeout)
        except HarnessError as exc:
            sys.stderr.write("conformance: %s\n" % exc)
    return len(victims)


# Registered first, so it runs after reap_all: the fork server is waited for, so its children's CPU
# (every forked launcher with its node) adds up in this process's, and `time` around a run counts it.
atexit.register(_fork_server._stop)
atexit.register(reap_all)
