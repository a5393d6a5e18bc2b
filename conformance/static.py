"""Static checks on a node file, run before any contract check.

They are generic (every contract has them) and report under the NODE
section with the contract's own clause IDs, ``<PREFIX>-NODE-1..4``:

node.stdlib  NODE-1: the file parses under the Python 3.9 grammar and imports
             only modules that every CPython from 3.9 to 3.13 ships.
node.help    NODE-2: ``--help`` with an empty environment, in an empty
             directory, exits 0 within SHORT_TIMEOUT_S, prints usage to
             stdout, and neither reads a file nor makes a request.
node.import  NODE-3: importing the file without running main() has no effect:
             no network, no signal handler, no thread, no process, no file
             written.
node.edit-surface  NODE-4 (NODE-5 for scan and session, whose NODE-4 is their
             idle cost): a copy of a reference node (a file with its KEEP line)
             reads a name defined below the KEEP line from section 3 only when
             the frame box that opens section 3 lists it (conformance.layout).

For a node given as ``-- COMMAND`` they are SKIP: there is no file to judge.

How effects are seen: the probe (`_PROBE`) runs in a fresh interpreter, opens
its report file, installs a ``sys.addaudithook`` hook (socket, open-for-write,
file-system and process events) and wraps ``signal.signal`` and friends and
``threading.Thread.start``, then ``runpy.run_path`` the node (as
``conformance_import_probe``, or as ``__main__`` with ``--help``). Limits:
``ast.parse(feature_version=(3, 9))`` is best effort (the running
interpreter's grammar with 3.9 restrictions), and an import by a computed name
is only caught at run time.
"""

import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile

from conformance import clauses as _clauses
from conformance import layout
from conformance import runner as _runner
from conformance.checks import Check, Skip
from conformance.timeouts import SHORT_TIMEOUT_S

# Top-level modules present in every CPython from 3.9 to 3.13 (sys.stdlib_module_names
# exists only from 3.10). Built from 3.11's list, minus the modules added after 3.9 and
# the ones removed by 3.12 or 3.13 (listed below so the message can say so).
STDLIB_MODULES = frozenset("""
    __future__ _abc _aix_support _ast _asyncio _bisect _blake2 _bz2 _codecs _codecs_cn _codecs_hk
    _codecs_iso2022 _codecs_jp _codecs_kr _codecs_tw _collections _collections_abc _compat_pickle
    _compression _contextvars _csv _ctypes _curses _curses_panel _datetime _dbm _decimal
    _elementtree _frozen_importlib _frozen_importlib_external _functools _gdbm _hashlib _heapq _imp
    _io _json _locale _lsprof _lzma _markupbase _md5 _multibytecodec _multiprocessing _opcode
    _operator _osx_support _overlapped _pickle _posixshmem _posixsubprocess _py_abc _pydecimal _pyio
    _queue _random _scproxy _sha1 _sha3 _signal _sitebuiltins _socket _sqlite3 _sre _ssl _stat
    _statistics _string _strptime _struct _symtable _thread _threading_local _tkinter _tokenize
    _tracemalloc _typing _uuid _warnings _weakref _weakrefset _winapi _zoneinfo abc antigravity
    argparse array ast asyncio atexit base64 bdb binascii bisect builtins bz2 cProfile calendar
    cmath cmd code codecs codeop collections colorsys compileall concurrent configparser contextlib
    contextvars copy copyreg csv ctypes curses dataclasses datetime dbm decimal difflib dis doctest
    email encodings ensurepip enum errno faulthandler fcntl filecmp fileinput fnmatch fractions
    ftplib functools gc genericpath getopt getpass gettext glob graphlib grp gzip hashlib heapq hmac
    html http idlelib imaplib importlib inspect io ipaddress itertools json keyword linecache locale
    logging lzma mailbox marshal math mimetypes mmap modulefinder msvcrt multiprocessing netrc nt
    ntpath nturl2path numbers opcode operator optparse os pathlib pdb pickle pickletools pkgutil
    platform plistlib poplib posix posixpath pprint profile pstats pty pwd py_compile pyclbr pydoc
    pydoc_data pyexpat queue quopri random re readline reprlib resource rlcompleter runpy sched
    secrets select selectors shelve shlex shutil signal site smtplib socket socketserver sqlite3
    sre_compile sre_constants sre_parse ssl stat statistics string stringprep struct subprocess
    symtable sys sysconfig syslog tabnanny tarfile tempfile termios textwrap this threading time
    timeit tkinter token tokenize trace traceback tracemalloc tty turtle turtledemo types typing
    unicodedata unittest urllib uuid venv warnings wave weakref webbrowser winreg winsound wsgiref
    xml xmlrpc zipapp zipfile zipimport zlib zoneinfo
""".split())

# Standard-library modules a node cannot rely on, with the reason.
NOT_PORTABLE = {
    "tomllib": "added in Python 3.11 (absent from 3.9 and 3.10)",
    "asynchat": "removed in Python 3.12", "asyncore": "removed in Python 3.12",
    "distutils": "removed in Python 3.12", "imp": "removed in Python 3.12", "smtpd": "removed in Python 3.12",
    "aifc": "removed in Python 3.13", "audioop": "removed in Python 3.13", "cgi": "removed in Python 3.13",
    "cgitb": "removed in Python 3.13", "chunk": "removed in Python 3.13", "crypt": "removed in Python 3.13",
    "imghdr": "removed in Python 3.13", "mailcap": "removed in Python 3.13", "msilib": "removed in Python 3.13",
    "nis": "removed in Python 3.13", "nntplib": "removed in Python 3.13", "ossaudiodev": "removed in Python 3.13",
    "pipes": "removed in Python 3.13", "sndhdr": "removed in Python 3.13", "spwd": "removed in Python 3.13",
    "sunau": "removed in Python 3.13", "telnetlib": "removed in Python 3.13", "uu": "removed in Python 3.13",
    "xdrlib": "removed in Python 3.13", "lib2to3": "removed in Python 3.13",
    "_sha256": "replaced by _sha2 in Python 3.12", "_sha512": "replaced by _sha2 in Python 3.12",
    "formatter": "removed in Python 3.10", "parser": "removed in Python 3.10", "symbol": "removed in Python 3.10",
    "binhex": "removed in Python 3.11",
}

# The probe: python3 -I -B -c _PROBE REPORT MODE NODE [ARGS...]; MODE is "import" or "help".
_PROBE = r'''
import json, os, sys, threading, traceback
report_path, mode, node = sys.argv[1], sys.argv[2], sys.argv[3]
report = open(report_path, "w", encoding="utf-8")
events = []
allowed_prefixes = tuple(os.path.realpath(p) + os.sep for p in {sys.prefix, sys.base_prefix, sys.exec_prefix})
node_real = os.path.realpath(node)
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
NETWORK = {"socket.connect", "socket.sendto", "socket.sendmsg", "socket.bind", "socket.getaddrinfo",
           "socket.gethostbyname", "socket.gethostbyaddr", "socket.getnameinfo"}
FILESYSTEM = {"os.mkdir", "os.rename", "os.remove", "os.rmdir", "os.symlink", "os.link", "os.truncate",
              "os.chmod", "os.chown", "os.utime", "shutil.copyfile", "shutil.rmtree", "shutil.move"}
PROCESS = {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
           "os.forkpty", "os.kill", "os.killpg", "pty.spawn"}
def short(value):
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."
def hook(event, args):
    if event in NETWORK:
        events.append(["network", event, short(args[1:] if event.startswith("socket.connect") or event == "socket.bind" else args)])
    elif event in FILESYSTEM:
        events.append(["file", event, short(args)])
    elif event in PROCESS:
        events.append(["process", event, short(args)])
    elif event == "open":
        path, fmode, flags = (list(args) + [None, None, None])[:3]
        if not isinstance(path, (str, bytes)):
            return
        path = os.fsdecode(path)
        writing = bool(fmode and any(c in str(fmode) for c in "wax+")) or bool(isinstance(flags, int) and flags & WRITE_FLAGS)
        if path in ("/dev/null", "/dev/tty"):
            return
        if writing:
            events.append(["file", "open for writing", short(path)])
        elif mode == "help":
            real = os.path.realpath(path)
            if real != node_real and not real.startswith(allowed_prefixes) and not real.startswith(("/proc/", "/dev/", "/sys/")):
                events.append(["read", "open", short(path)])
import signal
def wrap(name):
    original = getattr(signal, name, None)
    if original is None:
        return
    def recording(*args):
        events.append(["signal", "signal." + name, short(args[:1])])
        return original(*args)
    setattr(signal, name, recording)
for name in ("signal", "set_wakeup_fd", "setitimer", "alarm", "siginterrupt", "pthread_sigmask"):
    wrap(name)
original_start = threading.Thread.start
def recording_start(self, *args, **kwargs):
    events.append(["thread", "threading.Thread.start", short(self.name)])
    return original_start(self, *args, **kwargs)
threading.Thread.start = recording_start
sys.addaudithook(hook)
sys.argv = [node] + sys.argv[4:]
outcome = {"exit": None, "exception": None}
try:
    import runpy
    runpy.run_path(node, run_name="__main__" if mode == "help" else "conformance_import_probe")
except SystemExit as stop:
    code = stop.code
    outcome["exit"] = 0 if code is None else (code if isinstance(code, int) else 1)
except BaseException as exc:
    outcome["exception"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()[-500:]
try:
    sys.stdout.flush()
    sys.stderr.flush()
except Exception:
    pass
threads = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
json.dump({"events": events, "outcome": outcome, "threads": threads}, report)
report.close()
os._exit(0)
'''


def _listing(path):
    found = []
    for top, dirs, files in os.walk(path):
        for name in dirs + files:
            found.append(os.path.relpath(os.path.join(top, name), path))
    return sorted(found)


def run_probe(node_path, mode, args=(), timeout=SHORT_TIMEOUT_S, python=None):
    """Run the probe on a node file, under `python` (the node's interpreter; this one's by
    default); returns a dict with events, outcome, threads, stdout, stderr, created (files
    left in cwd or TMPDIR), timed_out, returncode."""
    work = tempfile.mkdtemp(prefix="conformance-probe-")
    try:
        cwd, scratch = os.path.join(work, "cwd"), os.path.join(work, "tmp")
        os.mkdir(cwd)
        os.mkdir(scratch)
        report_path = os.path.join(work, "report.json")
        argv = [python or sys.executable, "-I", "-B", "-c", _PROBE, report_path, mode, node_path] + list(args)
        env = {"TMPDIR": scratch}
        _runner.count_node_start()
        try:
            done = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=timeout)
            timed_out, returncode, out, err = False, done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired as late:
            timed_out, returncode, out, err = True, None, late.stdout or b"", late.stderr or b""
        report = {"events": [], "outcome": {}, "threads": []}
        try:
            with open(report_path, encoding="utf-8") as handle:
                report = json.load(handle)
            report["reported"] = True
        except (OSError, ValueError):
            report["reported"] = False
        report.update(stdout=out.decode("utf-8", "replace"), stderr=err.decode("utf-8", "replace"),
                      created=[os.path.join("cwd", p) for p in _listing(cwd)] +
                      [os.path.join("TMPDIR", p) for p in _listing(scratch)],
                      timed_out=timed_out, returncode=returncode)
        return report
    finally:
        shutil.rmtree(work, ignore_errors=True)


# --------------------------------------------------------------------------
# NODE-1: grammar and imports
# --------------------------------------------------------------------------
def imported_modules(tree):
    """[(line, top-level module name, how)] for every import in the tree,
    including importlib.import_module("x") and __import__("x") with a literal."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append((node.lineno, alias.name.split(".")[0], "import"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                found.append((node.lineno, "." * node.level + (node.module or ""), "relative import"))
            elif node.module:
                found.append((node.lineno, node.module.split(".")[0], "from-import"))
        elif isinstance(node, ast.Call) and node.args:
            func, first = node.func, node.args[0]
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            literal = getattr(first, "value", None)
            if name in ("import_module", "__import__") and isinstance(literal, str):
                found.append((node.lineno, literal.split(".")[0], name))
    return sorted(found)


def judge_source(source, filename="<node>"):
    """Problems with a node's source (bytes or str): [] when it is 3.9 grammar, stdlib only."""
    try:
        tree = ast.parse(source, filename, feature_version=(3, 9))
    except SyntaxError as exc:
        return ["does not parse as Python 3.9: line %s: %s" % (exc.lineno, exc.msg)]
    except ValueError as exc:  # e.g. null bytes
        return ["does not parse as Python 3.9: %s" % exc]
    problems = []
    for line, name, how in imported_modules(tree):
        if name.startswith("."):
            problems.append("line %d: %s %s: a single-file node cannot import its neighbours" % (line, how, name))
        elif name in NOT_PORTABLE:
            problems.append("line %d: %s %s: %s" % (line, how, name, NOT_PORTABLE[name]))
        elif name not in STDLIB_MODULES and name != "__main__":
            problems.append("line %d: %s %s: not a standard-library module" % (line, how, name))
    return problems


def _check_stdlib(ctx):
    path = _node_file(ctx)
    with open(path, "rb") as handle:
        source = handle.read()
    problems = judge_source(source, path)
    ctx.note("parsed %s (%d bytes) with feature_version=(3, 9)" % (path, len(source)))
    ctx.expect(not problems, expected="Python 3.9 grammar and standard-library imports only",
               actual="; ".join(problems[:5]) + (" (and %d more)" % (len(problems) - 5) if len(problems) > 5 else ""),
               diagnosis="a node people copy must run on a bare Python 3.9+ with nothing installed")


# --------------------------------------------------------------------------
# NODE-2: --help
# --------------------------------------------------------------------------
def _check_help(ctx):
    path = _node_file(ctx)
    work = ctx.tmpdir("help-cwd")
    argv = [ctx.node.argv[0], path, "--help"]  # the node's interpreter (--python), not necessarily this one
    ctx.note("running %s in an empty directory with an empty environment" % " ".join(argv))
    _runner.count_node_start()
    try:
        done = subprocess.run(argv, cwd=work, env={}, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=SHORT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        ctx.fail("exit 0 within %.0f s" % SHORT_TIMEOUT_S, "still running after %.0f s (killed)" % SHORT_TIMEOUT_S,
                 "--help must not wait for anything: parse arguments before any work")
    out, err = done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")
    ctx.note("exit %d; stdout %d bytes; stderr %d bytes" % (done.returncode, len(out), len(err)))
    for line in err.splitlines()[-10:]:
        ctx.note("stderr | " + line)
    ctx.expect(done.returncode == 0, expected="exit 0", actual="exit %d; stderr: %s" % (done.returncode, err.strip()[-300:]),
               diagnosis="--help must work with no environment: read configuration after parsing arguments")
    ctx.expect("usage" in out.lower(), expected="usage text on stdout",
               actual="stdout: %r" % out[:200], diagnosis="print the usage (argparse does) to stdout")
    created = _listing(work)
    ctx.expect(not created, expected="no file written", actual="created: %s" % ", ".join(created[:5]),
               diagnosis="--help must not write anything")
    report = run_probe(path, "help", ["--help"], python=ctx.node.argv[0])
    _note_probe(ctx, report)
    effects = [e for e in report["events"] if e[0] in ("network", "read", "file", "process")]
    ctx.expect(not effects, expected="no request, no file read or written",
               actual="; ".join("%s %s" % (e[1], e[2]) for e in effects[:5]),
               diagnosis="--help must print usage before reading configuration or opening connections")


# --------------------------------------------------------------------------
# NODE-3: import has no effect
# --------------------------------------------------------------------------
def _check_import(ctx):
    path = _node_file(ctx)
    report = run_probe(path, "import", python=ctx.node.argv[0])
    _note_probe(ctx, report)
    ctx.expect(not report["timed_out"], expected="import finishes within %.0f s" % SHORT_TIMEOUT_S,
               actual="still running after %.0f s" % SHORT_TIMEOUT_S,
               diagnosis="importing the module must not run the node: guard main() with if __name__ == '__main__'")
    if not report["reported"]:
        raise RuntimeError("the import probe wrote no report (exit %s): %s" % (report["returncode"], report["stderr"][-300:]))
    outcome = report["outcome"]
    ctx.expect(outcome.get("exit") is None, expected="import without running main()",
               actual="importing raised SystemExit(%s)" % outcome.get("exit"),
               diagnosis="guard main() with if __name__ == '__main__'")
    ctx.expect(not outcome.get("exception"), expected="import succeeds with an empty environment",
               actual="importing raised %s" % outcome.get("exception"),
               diagnosis="read configuration in main(), not at import")
    effects = ["%s %s" % (e[1], e[2]) for e in report["events"]]
    effects += ["file left behind: %s" % p for p in report["created"]]
    effects += ["thread still running: %s" % t for t in report["threads"] if not any(e[0] == "thread" for e in report["events"])]
    ctx.expect(not effects, expected="no network, no signal handler, no thread or process, no file written",
               actual="; ".join(effects[:6]) + (" (and %d more)" % (len(effects) - 6) if len(effects) > 6 else ""),
               diagnosis="move every side effect into main() so the file can be imported and tested")


# --------------------------------------------------------------------------
# NODE-4 (scan, session: NODE-5): section 3 reaches below KEEP only through its frame
# --------------------------------------------------------------------------
def _check_edit_surface(ctx):
    path = _node_file(ctx)
    with open(path, "rb") as handle:
        source = handle.read().decode("utf-8", "replace")
    try:
        surface = layout.edit_surface(source)
    except SyntaxError:
        raise Skip("the file does not parse (node.stdlib says where)")
    if not surface.has_keep:
        raise Skip("no KEEP line (%r) above a section 4: not a copy of a reference node, so there is no "
                   "frame to hold it to" % layout.KEEP_LINE)
    ctx.note("section 3 reads %d name(s) defined below KEEP: %s" % (
        len(surface.reached), ", ".join(sorted(surface.reached)) or "none"))
    ctx.note("the frame lists: %s" % (", ".join(sorted(surface.listed)) or "none"))
    ctx.expect(surface.has_frame, expected="section 3 opens with the frame box (%s)" % ", ".join(layout.FRAME_LABELS),
               actual="no frame box with those four labels under the banner '# 3 Your work [EDIT]'",
               diagnosis="copy the box from the reference node's section 3 and fill in what your work calls")
    unlisted = surface.unlisted()
    ctx.expect(not unlisted, expected="every name section 3 reads from below KEEP is listed in 'Uses from below KEEP:'",
               actual="; ".join("line %d reads %s" % item for item in unlisted[:6])
               + (" (and %d more)" % (len(unlisted) - 6) if len(unlisted) > 6 else ""),
               diagnosis="list the name in the frame, or define what your work needs above the KEEP line: "
                         "a newer copy of the machinery may rename it")
    late = surface.late_reads()
    ctx.expect(not late, expected="section 3 reads no name that only a function binds as a global (a late import)",
               actual="; ".join("line %d reads %s, bound only once %s() has run" % item for item in late[:6])
               + (" (and %d more)" % (len(late) - 6) if len(late) > 6 else ""),
               diagnosis="import the module in section 1: section 3 also runs in a process that never calls that "
                         "function (a probe or normaliser child), where the name is unbound and the work "
                         "fails with NameError")


def _note_probe(ctx, report):
    ctx.note("probe: %d event(s), outcome %s, exit %s" % (len(report["events"]), report.get("outcome"),
                                                         report["returncode"]))
    for event in report["events"][:20]:
        ctx.note("probe event: %s" % " ".join(str(part) for part in event))
    for line in report["stderr"].splitlines()[-10:]:
        ctx.note("probe stderr | " + line)


def _node_file(ctx):
    if ctx.node.path is None:
        raise Skip("NODE is given as a command (%s), not a Python file: static checks need the file"
                   % ctx.node.display)
    return ctx.node.path


# --------------------------------------------------------------------------
# The checks, one set per contract
# --------------------------------------------------------------------------
_STATIC = [
    # (id, NODE clause number, default level, title, fakes, expected, run)
    ("node.stdlib", 1, "MUST", "parses as Python 3.9 and imports only the standard library",
     "none: the file is parsed, not run", "no syntax newer than 3.9; every import in the 3.9-3.13 stdlib",
     _check_stdlib),
    ("node.help", 2, "SHOULD", "--help with an empty environment prints usage and exits 0",
     "none: empty environment, empty working directory",
     "exit 0 within SHORT_TIMEOUT_S, 'usage' on stdout, no file, no request", _check_help),
    ("node.import", 3, "MUST", "importing the file without running main() has no effect",
     "socket, open-for-write, signal, thread and process calls are recorded by an audit hook",
     "no network, no signal handler, no thread or process, no file written", _check_import),
    ("node.edit-surface", 4, "SHOULD", "section 3 reads names below the KEEP line only through its frame",
     "none: the file is parsed, not run",
     "every module-level name below KEEP that section 3 reads is listed in its frame box; it reads no module "
     "that only a function imports, late", _check_edit_surface),
]
# Judged only where the contract document defines the clause: a contract whose nodes are no
# copies of a reference node (the harness's own toy contracts) has no frame to hold them to.
NEEDS_CLAUSE = ("node.edit-surface",)
# A contract whose NODE-4 was taken before node.edit-surface came cites the next number.
CLAUSE_NUMBERS = {("scan", 4): 5, ("session", 4): 5}


def checks_for(contract):
    """The static checks for a contract, citing <PREFIX>-NODE-1..4 (levels
    from the contract document when it defines those clauses)."""
    prefix = _clauses.clause_prefix(contract)
    try:
        doc = _clauses.load(contract)
    except _clauses.ContractNotFound:
        doc = None
    made = []
    for check_id, number, level, title, fakes, expected, run in _STATIC:
        clause_id = "%s-NODE-%d" % (prefix, CLAUSE_NUMBERS.get((contract, number), number))
        clause = doc.clauses.get(clause_id) if doc else None
        if check_id in NEEDS_CLAUSE and clause is None:
            continue  # a contract with no reference node to copy (the harness's own toys) has no frame to judge
        if clause is not None and clause.level in ("MUST", "SHOULD", "MAY"):
            level = clause.level
        made.append(Check(check_id, contract, "NODE", [clause_id], level, title, fakes, expected, run,
                          module=__name__))
    return made
