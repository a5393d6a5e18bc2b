"""Shared block `redact`: canonical copy (see nodes/blocks/README.md).

Everything below the `# ---- block body ----` line is embedded verbatim in
each node that uses it; the imports above the line are the node's own job.
"""
import re

# ---- block body ----
# redact: make any text safe to print.  Whoever holds a presigned URL's query
# string holds the object it names, and HTTP libraries build exception text
# from URLs; so every line a node prints, and every error it records, passes
# through redact() first.

REDACTED = "REDACTED"
_URL_RE = re.compile(r"\b(?:https?|s3)://[^\s'\"<>|\\]+", re.IGNORECASE)
_UNPRINTABLE_RE = re.compile(r"[\x00-\x1f\x7f]+")
_ALREADY_REDACTED_RE = re.compile(re.escape(REDACTED) + r"[).,;:\]}]*\Z")  # keeps redact() idempotent
_MIN_SECRET_CHARS = 8  # shorter values (a status code, "true") are not worth hiding


def _redact_url(match):
    """Keep scheme, host and path; drop userinfo, then query and fragment."""
    scheme, _, rest = match.group(0).partition("://")
    end = len(rest)
    for mark in "/?#":
        found = rest.find(mark)
        if found != -1 and found < end:
            end = found
    authority, tail = rest[:end], rest[end:]
    if "@" in authority:
        authority = authority.rpartition("@")[2]  # user:password@ is a credential too
    cut = len(tail)
    for mark in "?#":
        found = tail.find(mark)
        if found != -1 and found < cut:
            cut = found
    if cut < len(tail) and not _ALREADY_REDACTED_RE.match(tail, cut + 1):
        tail = tail[:cut + 1] + REDACTED
    return scheme + "://" + authority + tail


def redact(text, secrets=()):
    """`text` as one printable line with credentials removed.

    URLs lose userinfo, query and fragment; every string in `secrets` (values
    the caller knows to be credentials, such as policy fields or tokens) is
    replaced wherever it appears; control characters become spaces, so the
    result is always a single line.
    """
    out = _URL_RE.sub(_redact_url, str(text))
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= _MIN_SECRET_CHARS:
            out = out.replace(secret, REDACTED)
    return _UNPRINTABLE_RE.sub(" ", out).strip()
