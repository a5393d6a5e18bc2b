"""The worker's trees on disk, as the scan plane reads and plants them (SCAN-CONFIG-3, SCAN-STATE-*).

    trees = Trees(state_home, data_home)        # <XDG_STATE_HOME>/truf/remote-worker, and the data tree's
    trees.slot_state(0)                         # slot-0.json parsed strictly (floats allowed: D24), or None
    trees.write_slot(0, doc)                    # planted before a life starts; the invariants leave it alone
    trees.journal(), trees.read_json("progress-cursor.json"), trees.listing("bundles", "ready")

A worker keeps its slot files, stale records, journal and cursors in its state tree and its
bundles and work folders in its data tree; the plane points XDG_STATE_HOME and XDG_DATA_HOME at
private folders of its own and reads them from outside while a life runs, so every read here
tolerates a file that is absent or half-written (None, or the lines that parse). Bytes a check
planted are remembered (planted()): a slot file the worker must keep untouched is no breach of
SCAN-STATE-2. write_atomic and private_dirs are how the plane writes any file the worker reads
(the token file too).
"""

import os
import secrets as _secrets
import threading

from conformance.planes.scan.protocol import canonical, parse_document, parse_strict

__all__ = ["Trees", "TREE", "write_atomic", "private_dirs"]

# The tree of a worker (SCAN-CONFIG-3), under XDG_STATE_HOME and XDG_DATA_HOME.
TREE = os.path.join("truf", "remote-worker")


def private_dirs(path):
    """Create path and its missing parents, each 0700 (SCAN-STATE-1 asks it of the trees)."""
    missing = []
    while path and not os.path.isdir(path):
        missing.append(path)
        path = os.path.dirname(path)
    for directory in reversed(missing):
        os.mkdir(directory, 0o700)
        os.chmod(directory, 0o700)


def write_atomic(path, data, mode):
    """data to path through a new file in the same directory and os.replace (a new inode)."""
    tmp = "%s.tmp-%s" % (path, _secrets.token_hex(4))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)
        os.fchmod(fd, mode)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


class Trees(object):
    """The worker's trees: state_dir (slot files, the journal, cursors), bundle_dir and work_dir."""

    def __init__(self, state_home, data_home):
        self.state_dir = os.path.join(state_home, TREE)
        self.bundle_dir = os.path.join(data_home, TREE, "bundles")
        self.work_dir = os.path.join(data_home, TREE, "work")
        self._lock = threading.Lock()
        self._planted = set()      # bytes of slot files a check planted (kept as planted by design)

    # ---------------------------------------------------------------- slot files
    def slot_path(self, slot, stale=False):
        return os.path.join(self.state_dir, "slot-%d%s.json" % (slot, "-stale" if stale else ""))

    def slot_raw(self, slot, stale=False):
        """The slot file's bytes, or None when there is none."""
        try:
            with open(self.slot_path(slot, stale), "rb") as handle:
                return handle.read()
        except OSError:
            return None

    def slot_state(self, slot, stale=False):
        """The slot file parsed strictly (floats allowed: D24), or None (absent, or not strict JSON)."""
        raw = self.slot_raw(slot, stale)
        if raw is None:
            return None
        try:
            return parse_document(raw)
        except ValueError:
            return None

    def phase_is(self, slot, phase):
        """A predicate: slot's state file shows phase (None: the slot file is gone)."""
        if phase is None:
            return lambda: self.slot_raw(slot) is None
        return lambda: (self.slot_state(slot) or {}).get("phase") == phase

    def write_slot(self, slot, doc, stale=False, mode=0o600):
        """Plant a slot file (a doc, written canonical, or bytes) before a life starts; the
        invariants leave bytes planted this way alone (a state the worker must keep untouched)."""
        data = doc if isinstance(doc, bytes) else canonical(doc)
        private_dirs(self.state_dir)
        write_atomic(self.slot_path(slot, stale), data, mode)
        with self._lock:
            self._planted.add(data)
        return self.slot_path(slot, stale)

    def planted(self):
        """The bytes of every slot file write_slot planted."""
        with self._lock:
            return set(self._planted)

    # ---------------------------------------------------------------- the rest of the trees
    def read_json(self, relative):
        """A JSON file of the state tree (e.g. "progress-cursor.json") parsed strictly, or None."""
        try:
            with open(os.path.join(self.state_dir, relative), "rb") as handle:
                return parse_strict(handle.read())
        except (OSError, ValueError):
            return None

    def journal(self):
        """The events of <state>/events.jsonl that parse, in order."""
        found = []
        try:
            with open(os.path.join(self.state_dir, "events.jsonl"), "rb") as handle:
                for line in handle:
                    try:
                        found.append(parse_strict(line.rstrip(b"\n")))
                    except ValueError:
                        continue
        except OSError:
            pass
        return found

    def listing(self, tree="bundles", sub=""):
        """Names in a tree ("state", "bundles", "work") or a folder of it (sub="ready")."""
        root = {"state": self.state_dir, "bundles": self.bundle_dir, "work": self.work_dir}[tree]
        try:
            return sorted(os.listdir(os.path.join(root, sub)))
        except OSError:
            return []
