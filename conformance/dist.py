"""`make dist`: the harness as one file to vendor, dist/conformance.pyz.

    python3 -m conformance.dist [OUT]        # default dist/conformance.pyz
    python3 conformance.pyz step my_node.py  # from any directory, Python 3.9+

The archive holds the harness package (without its own tests, private
contracts, mutants, benches and repository tools) and what it reads at run
time: the contracts, their schemas and the test CA. It is built with the
standard library's zipapp, byte for byte the same from the same tree (sorted
entries, fixed times).

Run, the archive's __main__ extracts itself once into a cache directory named
after its own SHA-256 ($XDG_CACHE_HOME or ~/.cache, else the temporary
directory: `conformance-pyz/<hash>`), then runs the harness from there.  The
harness reads files (the CA, the contracts) and starts helper processes (the
fork server, the scripted normaliser) that import it by path, which a zip on
sys.path cannot serve; an extracted copy behaves exactly like a checkout.
Nothing is written next to the archive or in the directory it is run from,
unless the user asks (--junit, --json, --html).
"""

import io
import os
import re
import sys
import zipapp
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "dist", "conformance.pyz")

# What the archive carries, relative to the repository root.
INCLUDE_DIRS = ("conformance", "contract")
# Not needed to judge a node: the harness's own tests and private contracts
# (_selftest, _worker), the reference nodes' mutants and their runner, the
# benches and the repository tools (they need the repository's nodes), the
# contracts' example documents (read only by the unit tests).
EXCLUDE = ("conformance/tests/", "conformance/mutants/", "conformance/mutants.py", "conformance/bench/",
           "conformance/dist.py", "conformance/suite.py", "conformance/sync.py",
           "contract/examples/")
# _selftest/, _worker/: directories only; a module such as _unprivileged.py is the checks' own code
PRIVATE_CONTRACT = re.compile(r"^conformance/checks/_[a-z][a-z0-9_]*/")
FIXED_TIME = (2026, 1, 1, 0, 0, 0)

MAIN = '''"""conformance.pyz: extract once into a cache, then run the harness from there (see conformance/dist.py)."""
import hashlib, os, shutil, sys, tempfile, zipfile

if sys.version_info < (3, 9):
    sys.stderr.write("conformance: Python 3.9 or newer is needed; %s is %d.%d\\n"
                     % (sys.executable or "this interpreter", sys.version_info[0], sys.version_info[1]))
    sys.exit(2)

def _home():
    archive = os.path.dirname(os.path.abspath(__file__))
    with open(archive, "rb") as handle:
        digest = hashlib.sha256(handle.read()).hexdigest()[:16]
    bases = [os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
             tempfile.gettempdir()]
    for base in bases:
        home = os.path.join(base, "conformance-pyz", digest)
        if os.path.isfile(os.path.join(home, ".complete")):
            return home
        try:
            os.makedirs(os.path.dirname(home), exist_ok=True)
            staging = tempfile.mkdtemp(prefix=digest + ".", dir=os.path.dirname(home))
        except OSError:
            continue
        with zipfile.ZipFile(archive) as zipped:
            for name in zipped.namelist():
                if name != "__main__.py":
                    zipped.extract(name, staging)
        open(os.path.join(staging, ".complete"), "w").close()
        try:
            os.rename(staging, home)
        except OSError:  # another run extracted it first
            shutil.rmtree(staging, ignore_errors=True)
        if os.path.isfile(os.path.join(home, ".complete")):
            return home
    sys.exit("conformance.pyz: no writable cache directory to extract into")

sys.path.insert(0, _home())
import conformance
conformance.LAUNCHER = ("python3", sys.argv[0])  # rerun lines repeat the path the user typed
from conformance.cli import main
sys.exit(main())
'''


def archive_entries(root=ROOT):
    """[(archive name, path on disk)] in sorted order."""
    entries = []
    for top in INCLUDE_DIRS:
        for directory, subdirs, files in os.walk(os.path.join(root, top)):
            subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
            for name in sorted(files):
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, root).replace(os.sep, "/")
                if name.endswith((".pyc", ".pyo")) or relative.startswith(EXCLUDE) or PRIVATE_CONTRACT.match(relative):
                    continue
                entries.append((relative, path))
    return sorted(entries)


def build(out=DEFAULT_OUT, root=ROOT):
    """Write the archive; return (path, number of files)."""
    entries = archive_entries(root)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name, path in [("__main__.py", None)] + entries:
            info = zipfile.ZipInfo(name, FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            if path is None:
                zipped.writestr(info, MAIN)
            else:
                with open(path, "rb") as handle:
                    zipped.writestr(info, handle.read())
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    temporary = out + ".tmp"
    buffer.seek(0)
    zipapp.create_archive(buffer, temporary, interpreter="/usr/bin/env python3")
    os.chmod(temporary, 0o755)
    os.replace(temporary, out)
    return out, len(entries)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] in (["-h"], ["--help"]) or len(argv) > 1:
        print(__doc__.strip().splitlines()[0])
        print("usage: python3 -m conformance.dist [OUT]   (default %s)" % os.path.relpath(DEFAULT_OUT, ROOT))
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    out, count = build(argv[0] if argv else DEFAULT_OUT)
    print("dist: wrote %s (%d files, %d bytes)" % (out, count, os.path.getsize(out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
