"""Shared block `utc_timestamp`: canonical copy (see nodes/blocks/README.md).

Everything below the `# ---- block body ----` line is embedded verbatim in
each node that uses it; the imports above the line are the node's own job.
Embedded by the step node, whose credentials carry a wall-clock expiry; the
crawler parses its documents' timestamps with its own stricter grammar.
"""
import datetime
import re

# ---- block body ----
# utc_timestamp: the lenient ISO-8601 parser used for wall-clock expiry times
# (an envelope's expires_at), the same on every Python version.

_UTC_TIMESTAMP_RE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?"
    r"(?:([Zz])|([+-])(\d{2}):?(\d{2}))?\Z"
)


def parse_utc_timestamp(text):
    """ISO-8601 text to epoch seconds, or None when it is not a usable time.

    A trailing Z and an explicit offset are honoured; a time without a zone is
    taken as UTC.  The same grammar on every Python version (3.9's
    datetime.fromisoformat accepts neither Z nor most fraction widths).
    """
    if not isinstance(text, str):
        return None
    match = _UTC_TIMESTAMP_RE.match(text.strip())
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, _z, sign, off_h, off_m = match.groups()
    try:
        moment = datetime.datetime(
            int(year), int(month), int(day), int(hour or 0), int(minute or 0),
            int(second or 0), int((fraction or "0")[:6].ljust(6, "0")),
            tzinfo=datetime.timezone.utc,
        )
        if sign:
            offset = datetime.timedelta(hours=int(off_h), minutes=int(off_m))
            moment = moment - offset if sign == "+" else moment + offset
    except (ValueError, OverflowError):
        return None
    return moment.timestamp()
