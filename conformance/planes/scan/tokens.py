"""The worker's token file and its rotations, as the scan plane writes them (SCAN-TOKEN-*).

    tokens = TokenFile(path, grace_s=0.0)       # the file's folder is made 0700
    tokens.rotate()                             # a new file (new inode, 0600) with 48 fresh characters
    tokens.write("short")                       # an invalid rotation: the server keeps the current token
    tokens.accepted(token)                      # the server's question: its index when accepted now

Every token the file ever held is kept in order (a ScanCall's token_index is its index here), and
so is the text of every invalid rotation: both are secrets of the run, which the invariants look
for everywhere but the Authorization header (SCAN-SECRET-1). The server accepts the current token
and, for grace_s after a rotation, the previous one.
"""

import os
import secrets as _secrets
import threading
import time

from conformance.planes.scan.trees import private_dirs, write_atomic

__all__ = ["TokenFile", "new_token"]


def new_token(chars=48):
    """A fresh token of `chars` URL-safe characters that never begins with "-".

    One that did would be read as an option when it follows `--token` as its own word,
    by the upstream's argparse as by ours (one token in 64 of token_urlsafe's): such a token
    is given as `--token=T`, and the checks that pass `--token T` would fail now and then.
    """
    while True:
        token = _secrets.token_urlsafe(chars)[:chars]
        if not token.startswith("-"):
            return token


class TokenFile(object):
    """The token file at path: current (the token it holds now), tokens (every token it held, in
    order), written (the text of every invalid rotation of 16 characters or more), grace_s (how
    long a rotated-out token is still accepted by default; 0: not at all)."""

    def __init__(self, path, grace_s=0.0):
        private_dirs(os.path.dirname(path))
        self.path, self.grace_s = path, grace_s
        self._lock = threading.Lock()
        self.tokens = []           # every token the file held, in order (index = ScanCall.token_index)
        self.written = []          # text of every write() (an invalid rotation)
        self._current, self._previous = None, None

    @property
    def current(self):
        """The token the file holds now (the one the server accepts)."""
        with self._lock:
            return self.tokens[self._current]

    def rotate(self, new=None, grace_s=None):
        """Replace the token file atomically (a new inode, mode 0600) with new (default 48 fresh
        characters); the server accepts it at once and the previous one for grace_s more seconds
        (default the file's grace_s). Returns the new token."""
        new = new or new_token()
        grace = self.grace_s if grace_s is None else grace_s
        with self._lock:
            self.tokens.append(new)
            previous, self._current = self._current, len(self.tokens) - 1
            self._previous = (previous, time.monotonic() + grace) if previous is not None and grace > 0 else None
        write_atomic(self.path, (new + "\n").encode("ascii"), 0o600)
        return new

    def write(self, text, mode=0o600):
        """Write anything into the token file (an invalid rotation: too short, a space, mode
        0644): atomically, with mode. The server keeps accepting the current token."""
        data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape")
        with self._lock:
            stripped = data.decode("utf-8", "replace").strip()
            if len(stripped) >= 16:
                self.written.append(stripped)
        write_atomic(self.path, data, mode)

    def accepted(self, token):
        """The server's question: the token's index when it is accepted now, else None."""
        with self._lock:
            if self._current is not None and token == self.tokens[self._current]:
                return self._current
            if self._previous is not None and token == self.tokens[self._previous[0]] \
                    and time.monotonic() < self._previous[1]:
                return self._previous[0]
        return None

    def secrets(self):
        """Every token the file held and every invalid rotation's text."""
        with self._lock:
            return list(self.tokens) + list(self.written)

    def describe(self, token):
        """How a report names a token: "token #n", never its value."""
        with self._lock:
            if token in self.tokens:
                return "token #%d" % (self.tokens.index(token) + 1)
        return "a token written as an invalid rotation"
