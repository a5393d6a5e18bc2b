"""What every step fake shares: the run's fixed identity, the names in staging, the pinned Input.

The identity of the run is fixed: execution 41, attempt 2, generation 3, the
idempotency key idem-41-2; the staging prefix is that attempt's own. The fakes
of this package are not servers: the ones that are (the object store, the
proxy) are conformance.store.ObjectStore and conformance.proxy.ProxyServer,
and faults enter them the one way every fake takes them::

    plane.store.add_fault(faults.hang(), Match(method="GET", key="inputs/*"))
    plane.proxy.add_fault(faults.reset(after_bytes=0))
"""

import hashlib
import os
import time

__all__ = ["MARKER_NAME", "RESULT_NAME", "KEY_PREFIX", "IDENTITY", "IDENTITY_ENV", "EXIT_STATUS", "CA_FILE",
           "OMIT", "Input", "is_data_key", "sha256_hex", "iso_utc", "exchanges", "take"]

MARKER_NAME = "__lspo_complete.json"
RESULT_NAME = "result.json"
KEY_PREFIX = "staging/exec-41/attempt-2/"
IDENTITY = {"execution_id": 41, "attempt": 2, "generation": 3, "idempotency_key": "idem-41-2"}
IDENTITY_ENV = {"LSPO_EXECUTION_ID": "41", "LSPO_ATTEMPT": "2", "LSPO_GENERATION": "3",
                "LSPO_IDEMPOTENCY_KEY": "idem-41-2"}
EXIT_STATUS = {0: "succeeded", 1: "failed", 10: "failed", 20: "cancelled"}
CA_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "ca", "ca.pem")

# Sentinel: leave a field out of the document entirely.
OMIT = object()


def is_data_key(key):
    """True for a key under the staging prefix that is neither result.json nor
    the marker: an object of the node's own work."""
    return bool(key) and key.startswith(KEY_PREFIX) and key[len(KEY_PREFIX):] not in (RESULT_NAME, MARKER_NAME)


def sha256_hex(data):
    return hashlib.sha256(data).hexdigest()


def iso_utc(epoch_s):
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(epoch_s))


def exchanges(store, method=None, key=None, key_suffix=None):
    """The store's exchanges, in order, with this method, key, key suffix."""
    out = []
    for ex in store.transcript:
        if method and ex.method != method:
            continue
        if key is not None and ex.key != key:
            continue
        if key_suffix is not None and not (ex.key or "").endswith(key_suffix):
            continue
        out.append(ex)
    return out


def take(options, names):
    """Remove the keywords among names from options and return them (a fake's share)."""
    return dict((name, options.pop(name)) for name in names if name in options)


class Input:
    """One pinned input. `data` bytes, or `generated` size for a virtual object.

    Pins default to the truth; pass sha256=/size= to lie, OMIT to leave out.
    source: "get" (presigned GET), "local" (local_path), "none" (neither).
    The job (job.py) fills in key, true_sha256, true_size and local_path.
    """

    def __init__(self, relpath, data=b"", port=None, name=OMIT, sha256=None, size=None,
                 generated=None, source="get", url=None):
        self.relpath = relpath
        self.data = data
        self.port = port
        self.name = name
        self.generated = generated
        self.source = source
        self.url = url                # a fixed get_url (e.g. a blackhole), not presigned
        self.sha256_pin = sha256
        self.size_pin = size
        self.key = None
        self.true_sha256 = None
        self.true_size = None
        self.local_path = None

    @property
    def display_name(self):
        return self.relpath or (self.name if self.name is not OMIT else None)
