"""The job the orchestrator launches: the manifest and the pinned inputs (STEP-MANIFEST-*, STEP-INPUT-*).

The manifest ``invocation.json`` is an object in the store, served through the
envelope's ``manifest_get``, or a local file named by ``manifest_path``; each
input is an object in the store (a generated one for a large size) or a local
file, with its sha256 and size pins. The identity variables (LSPO_EXECUTION_ID
and the rest) are the job's too: the environment's account of the launch.
"""

import json
import os

from conformance import dialect as _dialect
from conformance.planes.step.base import IDENTITY, IDENTITY_ENV, OMIT, exchanges, sha256_hex

__all__ = ["Job", "MANIFEST_KEY", "MANIFEST_DIALECTS"]

# The rewrites a job may apply to its manifest (option `manifest_dialect`),
# within what the upstream reads: a member nobody defined at the top (params
# is the job's own and echoed as it is); the identity numbers as 41.0, which
# the upstream took as absent (not an int) and replaced by the environment's.
MANIFEST_DIALECTS = ("members", "floats")
_IDENTITY_NUMBERS = ("execution_id", "attempt", "generation")

MANIFEST_KEY = "jobs/exec-41/invocation.json"


class Job(object):
    """The job of one run, seeded into store (an ObjectStore) and local_dir
    (where local inputs and a local manifest go). Options (also plane keywords):

    inputs           [Input], in the envelope's order; each is seeded here
                     (its key, true_sha256, true_size, local_path filled in).
    manifest         the manifest document (default: this run's IDENTITY,
                     schema_version 1, params {"greeting": "hello"}).
    manifest_raw     the manifest's bytes instead (bytes that are not JSON, say).
    manifest_source  "get" (an object in the store: manifest_get), "local" (a
                     file: manifest_path), anything else: the envelope names none.
    identity_env     set the LSPO_* identity variables (default True).
    manifest_dialect names from MANIFEST_DIALECTS, applied in order to the
                     manifest document (not to manifest_raw).

    ``inputs`` is a list the check may change before a rotation (the next
    envelope lists what it holds then).
    Observing: gets(item), input_gets(); manifest_key, manifest_path.
    """

    OPTIONS = ("inputs", "manifest", "manifest_raw", "manifest_source", "identity_env", "manifest_dialect")

    def __init__(self, store, local_dir, inputs=(), manifest=None, manifest_raw=None, manifest_source="get",
                 identity_env=True, manifest_dialect=()):
        self.store = store
        self.local_dir = local_dir
        self.inputs = list(inputs)
        self.manifest_source = manifest_source
        self.identity_env = identity_env
        if manifest is None:
            manifest = dict(IDENTITY, schema_version=1, params={"greeting": "hello"})
        for name in manifest_dialect:
            if name == "members":
                manifest = _dialect.unknown_members(manifest, top_only=True)
            elif name == "floats":
                manifest = _dialect.floats(manifest, _IDENTITY_NUMBERS)
            else:
                raise ValueError("unknown manifest dialect %r (known: %s)" % (name, ", ".join(MANIFEST_DIALECTS)))
        self.manifest = manifest
        self.manifest_raw = manifest_raw
        self.manifest_key = MANIFEST_KEY
        self.manifest_path = None

    def seed(self):
        """Put the manifest and every input where the envelope will say they are."""
        raw = self.manifest_raw if self.manifest_raw is not None else json.dumps(self.manifest).encode()
        if self.manifest_source == "get":
            self.store.put(self.manifest_key, raw)
        elif self.manifest_source == "local":
            self.manifest_path = os.path.join(self.local_dir, "invocation.json")
            with open(self.manifest_path, "wb") as handle:
                handle.write(raw)
        for index, item in enumerate(self.inputs):
            self._seed_input(index, item)

    def _seed_input(self, index, item):
        item.key = "inputs/%d/%s" % (index, (item.relpath or "unnamed").replace("\\", "_"))
        if item.generated is not None:
            item.true_sha256, item.true_size = self.store.serve_generated(item.key, item.generated,
                                                                          seed=index + 1)
        elif item.source == "local":
            item.local_path = os.path.join(self.local_dir, "input-%d.bin" % index)
            with open(item.local_path, "wb") as handle:
                handle.write(item.data)
            item.true_sha256, item.true_size = sha256_hex(item.data), len(item.data)
        else:
            item.true_sha256, item.true_size = self.store.put(item.key, item.data)

    # ---------------------------------------------------------------- what the envelope says of the job
    def manifest_entry(self, token):
        """The envelope's member naming the manifest ({} when it names none)."""
        if self.manifest_source == "get":
            return {"manifest_get": self.store.presign_get(self.manifest_key, token)}
        if self.manifest_source == "local":
            return {"manifest_path": self.manifest_path}
        return {}

    def input_entries(self, token):
        """The envelope's inputs: each with its pins (the truth unless the
        Input lies or OMITs them) and where to read it, presigned with token."""
        entries = []
        for item in self.inputs:
            entry = {"relpath": item.relpath}
            if item.name is not OMIT:
                entry["name"] = item.name
            pin = item.true_sha256 if item.sha256_pin is None else item.sha256_pin
            if pin is not OMIT:
                entry["sha256"] = pin
            size = item.true_size if item.size_pin is None else item.size_pin
            if size is not OMIT:
                entry["size"] = size
            if item.port is not None:
                entry["port"] = item.port
            if item.url is not None:
                entry["get_url"] = item.url
            elif item.source == "get":
                entry["get_url"] = self.store.presign_get(item.key, token)
            elif item.source == "local":
                entry["local_path"] = item.local_path
            entries.append(entry)
        return entries

    def env(self):
        """The node's identity variables (none without identity_env)."""
        return dict(IDENTITY_ENV) if self.identity_env else {}

    def manifest_document(self):
        """The manifest as the node could read it: a dict, {} when it is not a JSON object."""
        try:
            manifest = json.loads(self.manifest_raw.decode("utf-8")) if self.manifest_raw else self.manifest
        except ValueError:
            manifest = None
        return manifest if isinstance(manifest, dict) else {}

    # ---------------------------------------------------------------- observe
    def gets(self, item=None):
        """The store's GETs of item (an Input), or every GET."""
        return exchanges(self.store, "GET", key=None if item is None else item.key)

    def input_gets(self):
        """The store's GETs of any input (not the manifest's)."""
        keys = {item.key for item in self.inputs}
        return [ex for ex in exchanges(self.store, "GET") if ex.key in keys]
