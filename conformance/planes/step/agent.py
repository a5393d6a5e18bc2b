"""The platform's agent: it writes the credentials envelope and rotates it (STEP-CREDS-*).

The envelope (contract/step.md) lives in a directory the agent owns; the
variables ``env()`` returns point the node at it. Every URL in it is
presigned by the object store with the agent's current token. ``rotate()``
replaces the file as the agent does, unsignalled: a new token, a new file in
the same directory, renamed over the old one; the old token may be refused
from then on. ``rewrite_same()`` and ``remove()`` are the other things a
file can do under a running node.
"""

import json
import os
import time

from conformance.planes.step.base import OMIT, iso_utc

__all__ = ["CredentialsAgent"]


class CredentialsAgent(object):
    """The agent of one run: store (an ObjectStore: tokens and presigned
    URLs), directory (the agent's own), job (a Job: the manifest and the
    inputs the envelope names), collector (a Collector: the staging block),
    note (a callable the check's log takes). Options (also plane keywords):

    expires_in_s    expires_at is this many seconds after each write (default 900).
    expires_at      a fixed expires_at instead (any value, or OMIT to leave it out).
    envelope_patch  callable(doc): edits every document before it is written.
    creds_env       which variables name the file: "file" (LSPO_CREDENTIALS_FILE,
                    the default), "legacy" (LSPO_CREDENTIALS), "both" (each set;
                    the legacy one names a file that does not exist), "both-same"
                    (both name the file); anything else: neither.

    Acting: write(), rotate(), rewrite_same(), remove().
    Observing: path, directory, token (the current one), tokens (in order).
    """

    OPTIONS = ("expires_in_s", "expires_at", "envelope_patch", "creds_env")

    def __init__(self, store, directory, job, collector, note=lambda text: None, expires_in_s=900,
                 expires_at=None, envelope_patch=None, creds_env="file"):
        self.store = store
        self.directory = directory
        self.path = os.path.join(directory, "creds.json")
        self.job = job
        self.collector = collector
        self._note = note
        self.expires_in_s = expires_in_s
        self.expires_at = expires_at
        self.envelope_patch = envelope_patch
        self.creds_env = creds_env
        self.tokens = [store.new_token()]

    @property
    def token(self):
        return self.tokens[-1]

    def env(self):
        """The variables naming the file, as creds_env says."""
        env = {}
        if self.creds_env in ("file", "both", "both-same"):
            env["LSPO_CREDENTIALS_FILE"] = self.path
        if self.creds_env in ("legacy", "both"):
            env["LSPO_CREDENTIALS"] = (self.path if self.creds_env == "legacy"
                                       else os.path.join(self.directory, "elsewhere", "creds.json"))
        if self.creds_env == "both-same":
            env["LSPO_CREDENTIALS"] = self.path
        return env

    def envelope(self, token=None):
        """The envelope document for `token` (default: the current one), each
        URL presigned afresh."""
        token = token or self.token
        expires = self.expires_at
        if expires is None:
            expires = iso_utc(time.time() + self.expires_in_s)
        doc = {"schema_version": 1, "scheme": self.collector.scheme()}
        if expires is not OMIT:
            doc["expires_at"] = expires
        doc.update(self.job.manifest_entry(token))
        doc["inputs"] = self.job.input_entries(token)
        doc["staging"] = self.collector.staging_block(token)
        if self.envelope_patch:
            self.envelope_patch(doc)
        return doc

    def write(self, doc=None, raw=None):
        """Replace the credentials file atomically (new file, then rename):
        with raw bytes, with doc, or with a fresh envelope()."""
        if raw is None:
            raw = json.dumps(self.envelope() if doc is None else doc, indent=2).encode()
        tmp = os.path.join(self.directory, ".creds.json.new")
        with open(tmp, "wb") as handle:
            handle.write(raw)
        os.replace(tmp, self.path)

    def rotate(self, expire_old=True, expires_in_s=None):
        """What the agent does before expiry: a new token, a new file, no signal.
        The old token is refused from now on when expire_old; expires_in_s
        sets a new lifetime (and drops a fixed expires_at)."""
        old = self.token
        self.tokens.append(self.store.new_token())
        if expires_in_s is not None:
            self.expires_in_s = expires_in_s
            self.expires_at = None
        self.write()
        if expire_old:
            self.store.expire_token(old)
        self._note("plane: credentials rotated to token #%d%s" % (
            len(self.tokens), "; token #%d now refused" % (len(self.tokens) - 1) if expire_old else ""))

    def rewrite_same(self):
        """Rewrite the credentials file with identical bytes (a new inode)."""
        with open(self.path, "rb") as handle:
            raw = handle.read()
        self.write(raw=raw)

    def remove(self):
        """Delete the credentials file."""
        os.unlink(self.path)
        self._note("plane: credentials file removed")
