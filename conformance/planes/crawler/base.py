"""What every crawler fake shares: the run's fixed identity and small helpers.

The Fake base class (one loopback server, faults in through add_fault, the
server's observations) is the core's, conformance/fake.py; it is re-exported
here for the crawler's fakes. The metadata server, which the session plane
shares, is conformance/planes/metadata.py.
"""

import json
import os

from conformance.fake import Fake  # noqa: F401 (re-exported: the crawler's fakes import it from here)
from conformance.fake import read_body as _read_body
from conformance.planes import crawler_docs as docs

__all__ = ["SESSION_ID", "AUDIENCE_BASE", "BROKER_PATH", "BUCKET", "EXECUTION", "SOURCE_PATH",
           "DEFAULT_SOURCE", "CA_FILE", "Fake", "read_body", "short", "as_bytes"]

# ---------------------------------------------------------------- the run's fixed identity

# A canonical UUID (version 4): str(uuid.UUID(SESSION_ID)) == SESSION_ID.
SESSION_ID = "3f2b8c1e-7d4a-4e6b-9a15-c0d8e2f47b93"
# Only a string the node puts in token audiences; nothing listens there.
AUDIENCE_BASE = "https://studio.conformance.test/v1/crawler-sessions"
BROKER_PATH = "/v1/crawler-sessions"
BUCKET = "conformance-results"
EXECUTION = "crawler-job-x7k2p"
SOURCE_PATH = "/data.csv"
DEFAULT_SOURCE = b"city,temp_c,observed\nOslo,3,2024-01-05\nLima,19,2024-01-05\n\"Qu\xc3\xa9bec, QC\",-8,2024-01-05\n"
CA_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "ca", "ca.pem")

# Control-plane request bodies are tiny; this much is kept for the record and
# the rest is read and dropped (a node sending more is recorded, not buffered).
MAX_RECORDED_BODY_BYTES = 64 * 1024


def read_body(ctx, limit=MAX_RECORDED_BODY_BYTES):
    """The request body's first `limit` bytes (conformance/fake.py's read_body)."""
    return _read_body(ctx, limit)


def short(value, limit=120):
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=repr)
    return text if len(text) <= limit else text[:limit] + "..."


def as_bytes(doc):
    """A crawler_docs builder's result as canonical bytes (it may return bytes or a value)."""
    if isinstance(doc, (bytes, bytearray)):
        return bytes(doc)
    return docs.canonical(doc)
