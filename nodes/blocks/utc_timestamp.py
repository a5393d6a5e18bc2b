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
# (an envelope's expires_at), the same on every Python version.  It reads
# every form the upstream's datetime.fromisoformat() reads on 3.9 to 3.13
# (with a trailing Z): a peer that writes basic-format or week-date instants,
# an hour-only time or an offset with seconds is read, not taken as "expired".

_UTC_TIMESTAMP_RE = re.compile(
    # date: YYYY-MM-DD, YYYYMMDD, or the ISO week date YYYY-Www[-D] (dashes optional)
    r"(\d{4})(?:-(\d{2})-(\d{2})|(\d{2})(\d{2})|-?W(\d{2})(?:-?([1-7]))?)"
    # time after any one separator: HH[:MM[:SS[.fraction]]], colons optional
    r"(?:.(\d{2})(?::?(\d{2})(?::?(\d{2})(?:[.,](\d*))?)?)?)?"
    # zone, after at most one space: Z, or +-HH[:MM[:SS[.fraction]]], colons optional
    r" ?(?:([Zz])|([+-])(\d{2})(?::?(\d{2})(?::?(\d{2})(?:[.,](\d{1,6}))?)?)?)?\Z",
    re.DOTALL,
)


def _microseconds(fraction):
    """Digits after the decimal mark as microseconds (more than six are cut, as fromisoformat cuts them)."""
    return int((fraction or "0")[:6].ljust(6, "0"))


def parse_utc_timestamp(text):
    """ISO-8601 text to epoch seconds, or None when it is not a usable time.

    A trailing Z and an explicit offset are honoured; a time without a zone is
    taken as UTC.  The same grammar on every Python version (3.9's
    datetime.fromisoformat accepts neither Z nor most fraction widths, 3.11's
    takes basic format and week dates).
    """
    if not isinstance(text, str):
        return None
    match = _UTC_TIMESTAMP_RE.match(text.strip())
    if match is None:
        return None
    (year, month, day, b_month, b_day, week, weekday, hour, minute, second, fraction,
     _z, sign, off_h, off_m, off_s, off_f) = match.groups()
    try:
        if week is not None:
            date = datetime.date.fromisocalendar(int(year), int(week), int(weekday or 1))
        else:
            date = datetime.date(int(year), int(month or b_month), int(day or b_day))
        moment = datetime.datetime(date.year, date.month, date.day, int(hour or 0), int(minute or 0),
                                   int(second or 0), _microseconds(fraction), tzinfo=datetime.timezone.utc)
        if sign:
            offset = datetime.timedelta(hours=int(off_h), minutes=int(off_m or 0), seconds=int(off_s or 0),
                                        microseconds=_microseconds(off_f))
            if offset >= datetime.timedelta(days=1):
                return None  # fromisoformat refuses an offset of a day or more
            moment = moment - offset if sign == "+" else moment + offset
    except (ValueError, OverflowError):
        return None
    return moment.timestamp()
