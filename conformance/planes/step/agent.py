"""The platform's agent: it writes the credentials envelope and rotates it (STEP-CREDS-*).

The envelope (contract/step.md) lives in a directory the agent owns; the
variables ``env()`` returns point the node at it. Every URL in it is
presigned by the object store with the agent's current token. ``rotate()``
replaces the file as the agent does, unsignalled: a new token, a new file in
the same directory, renamed over the old one; the old token may be refused
from then on. ``rewrite_same()`` and ``remove()`` are the other things a
file can do under a running node.
"""

import datetime
import json
import os
import time

from conformance import dialect as _dialect
from conformance.planes.step.base import OMIT, iso_utc

__all__ = ["CredentialsAgent", "ENVELOPE_DIALECTS"]

# The rewrites an agent may apply to every envelope it writes (option
# `dialect`), each within what the upstream reads (contract/step.md,
# "Where we differ from the upstream"): a member nobody defined in every
# object but the policy's fields (the store refuses a form field its policy
# does not name); whole-number sizes written as 6.0; expires_at in another
# ISO 8601 form of the same instant (conformance/dialect.py's INSTANT_FORMS).
# schema_version never becomes 1.0: the upstream refused anything but the int.
ENVELOPE_DIALECTS = ("members", "floats") + tuple("instant:" + form for form in _dialect.INSTANT_FORMS)


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
    dialect         names from ENVELOPE_DIALECTS, applied in order to every
                    envelope written (rotations too), after envelope_patch.

    Acting: write(), rotate(), rewrite_same(), remove().
    Observing: path, directory, token (the current one), tokens (in order).
    """

    OPTIONS = ("expires_in_s", "expires_at", "envelope_patch", "creds_env", "dialect")

    def __init__(self, store, directory, job, collector, note=lambda text: None, expires_in_s=900,
                 expires_at=None, envelope_patch=None, creds_env="file", dialect=()):
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
        self.dialect = tuple(dialect)
        unknown = [name for name in self.dialect if name not in ENVELOPE_DIALECTS]
        if unknown:
            raise ValueError("unknown envelope dialect %s (known: %s)" % (unknown, ", ".join(ENVELOPE_DIALECTS)))
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
        expires, expiry = self.expires_at, None
        if expires is None:
            expiry = time.time() + self.expires_in_s
            expires = iso_utc(expiry)
        doc = {"schema_version": 1, "scheme": self.collector.scheme()}
        if expires is not OMIT:
            doc["expires_at"] = expires
        doc.update(self.job.manifest_entry(token))
        doc["inputs"] = self.job.input_entries(token)
        doc["staging"] = self.collector.staging_block(token)
        if self.envelope_patch:
            self.envelope_patch(doc)
        return self._speak(doc, expiry)

    def _speak(self, doc, expiry):
        """doc rewritten by each of the dialect's names (see ENVELOPE_DIALECTS)."""
        for name in self.dialect:
            if name == "members":
                staging = doc.get("staging")
                post = staging.get("post") if isinstance(staging, dict) else None
                fields = post.get("fields") if isinstance(post, dict) else None
                doc = _dialect.unknown_members(doc)
                if fields is not None:
                    doc["staging"]["post"]["fields"] = fields
            elif name == "floats":
                doc = _dialect.floats(doc, {"size"})
            elif expiry is not None:  # an instant form: only for an expires_at this agent computed
                moment = datetime.datetime.fromtimestamp(expiry, datetime.timezone.utc)
                doc["expires_at"] = _dialect.instant(moment, name.partition(":")[2])
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
