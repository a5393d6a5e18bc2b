"""Shared block `forms`: canonical copy (see nodes/blocks/README.md).

Everything below the `# ---- block body ----` line is embedded verbatim in
each node that uses it; the imports above the line are the node's own job.
"""
import datetime
import ipaddress
import re
import urllib.parse
import uuid

# ---- block body ----
# forms: one spelling for every value that ends up in a URL, a header or a
# route.  A second spelling slips past an exact comparison, a space or CR
# splits a request line, and a numeric host name reaches an address no policy
# listed.  Each test returns a value or None (False), never raises.  The rules
# are the crawler contract's (CRAWLER-CONFIG-2, -4); the session contract takes
# them over (its section URLs, D32).

_DIGEST_RE = re.compile(r"[0-9a-f]{64}")
_BUCKET_RE = re.compile(r"[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]")
_DIGITS_RE = re.compile(r"[0-9]+")  # ASCII digits only: \d would take Arabic-Indic digits
_JWS_RE = re.compile(rb"[A-Za-z0-9_-]{1,8192}\.[A-Za-z0-9_-]{1,8192}\.[A-Za-z0-9_-]{1,8192}")
_PRINTABLE_RE = re.compile(r"[\x21-\x7e]+")  # what a request line can carry: no space, control or non-ASCII
_TIMESTAMP_RE = re.compile(
    r"([0-9]{4})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
    r"T([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9])(?:\.([0-9]{1,6}))?Z")
_DNS_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_DNS_NAME_RE = re.compile(r"(?=.{1,253}\Z)%s(?:\.%s)*" % (_DNS_LABEL, _DNS_LABEL))
_NUMERIC_LABEL_RE = re.compile(r"[0-9]+|0x[0-9a-f]*")
_HOSTPORT_RE = re.compile(
    r"(\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)(?::([1-9][0-9]{0,4}))?")
_FORBIDDEN_IN_PATH = ("%", "\\", "//", "/./", "/../")


def is_canonical_uuid(value):
    """str(uuid.UUID(v)) == v: lowercase, hyphenated, 36 characters, any version."""
    if not isinstance(value, str) or len(value) != 36:
        return False
    try:
        return str(uuid.UUID(value)) == value
    except ValueError:
        return False


def parse_timestamp(value):
    """Epoch seconds of a canonical UTC timestamp (a real date, Z, 0-6 fraction digits), else None."""
    match = _TIMESTAMP_RE.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction = match.groups()
    try:
        moment = datetime.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second),
                                   int((fraction or "0").ljust(6, "0")), tzinfo=datetime.timezone.utc)
    except ValueError:  # February 30, year 0
        return None
    return moment.timestamp()


def is_dns_name(host):
    """A lowercase DNS name that no resolver reads as an IP literal.

    Resolvers read a name whose last label is all digits or 0x-hex as an
    address (127.1, 0x7f.1, 2130706433), so such a name could reach any IP
    past a check that only lists names.
    """
    return (isinstance(host, str) and bool(_DNS_NAME_RE.fullmatch(host))
            and not _NUMERIC_LABEL_RE.fullmatch(host.rsplit(".", 1)[-1]))


def origin_text(host, port, scheme="https"):
    """scheme://host[:port], with an IPv6 host in brackets."""
    shown = "[%s]" % host if ":" in host else host
    return scheme + "://" + shown + ("" if port is None else ":%d" % port)


def split_https(value, scheme="https"):
    """(host, port, path) of an https URL written in its one spelling, else None.

    The whole value must equal https:// + lowercase host + (:port) + path: so
    an uppercase host, an empty or zero-padded port, `:443`, userinfo, a
    query or fragment (even empty ones) are all refused.
    """
    if not isinstance(value, str) or not 1 <= len(value) <= 2048 or not _PRINTABLE_RE.fullmatch(value):
        return None  # the value goes on a request line: no space, control character or non-ASCII
    try:
        parts = urllib.parse.urlsplit(value)
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname
    if parts.scheme != scheme or not host or "@" in parts.netloc or parts.query or parts.fragment:
        return None
    default_port = 443 if scheme == "https" else 80
    if port is not None and (port == default_port or not 1 <= port <= 65535):  # CRAWLER-CONFIG-2 (D3): never :443
        return None
    if value != origin_text(host, port, scheme) + parts.path:  # CRAWLER-CONFIG-2: one spelling per URL
        return None
    return host, port, parts.path


def check_storage_origin(value):
    """The storage origin: exactly https://host[:port] or http://host[:port], or None.

    Plain http is for a stock Cloud Storage emulator on a developer's machine:
    it is accepted here and nowhere else, and the node says so on stderr.
    """
    scheme = "http" if isinstance(value, str) and value.startswith("http://") else "https"
    parts = split_https(value, scheme)
    if parts is None or parts[2] != "":  # CRAWLER-CONFIG-4: nothing after the authority
        return None
    return value


def check_metadata_host(value):
    """The metadata server's host[:port], or None."""
    match = _HOSTPORT_RE.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return None
    host, port = match.groups()
    if port is not None and int(port) > 65535:
        return None
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return None
    return value
