"""Shared block `strict_json`: canonical copy (see nodes/blocks/README.md).

Everything below the `# ---- block body ----` line is embedded verbatim in
each node that uses it; the imports above the line are the node's own job.
"""
import hashlib
import json
import math
import re

# ---- block body ----
# strict_json: one canonical encoding per document, so a node, its child and
# the platform compute the same digests; parsers that refuse duplicate keys,
# NaN, out-of-range integers and deep nesting in time linear in the input, so
# a hostile answer is refused, neither misread nor waited on.  Floats are
# refused unless the caller's document may hold them (floats=True).

MAX_JSON_DEPTH = 32  # nesting of any JSON a node or its child parses
MAX_SAFE_INTEGER = 2 ** 53 - 1  # the canonical integer range, +-(2^53 - 1)

# A string is skipped whole (brackets inside do not count); one that never
# closes runs to the end of the text in one match, so the scan stays linear:
# with a closing quote required, each of N unclosed quotes rescans to the end.
_JSON_TOKEN_RE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)|[\[\]{}]', re.DOTALL)
_JSON_BOM = b"\xef\xbb\xbf"  # the parser's own copy: a node's section 3 may drop or change its own


class JsonError(ValueError):
    """The parsers' only error, whatever the input; callers re-raise it with their phase's code."""

    def __init__(self, detail="not acceptable JSON"):
        super().__init__(detail)
        self.detail = detail


def canonical_bytes(value, ascii=False):
    """The canonical encoding of a JSON value.

    Sorted keys, no whitespace, UTF-8 (strict: a lone surrogate raises), and
    NaN or Infinity refused (ValueError); a finite float is written as
    Python writes it.  `ascii` writes every non-ASCII character as a \\u
    escape, for a contract whose digests are taken over that spelling.
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=ascii,
                      allow_nan=False).encode("utf-8")


def sha256_hex(data):
    return hashlib.sha256(data).hexdigest()


def digest_of(value, ascii=False):
    """A document's digest: lowercase hex SHA-256 of its canonical bytes."""
    return sha256_hex(canonical_bytes(value, ascii))


def _unique_pairs(pairs):
    document = {}
    for key, value in pairs:
        if key in document:
            raise ValueError("duplicate key")  # the parser refuses duplicate keys
        document[key] = value
    return document


def _refuse_float(text):
    raise ValueError("a float")


def _finite_float(text):
    value = float(text)
    if not math.isfinite(value):  # 1e999 reads as infinity: out of range, like NaN
        raise ValueError("a number out of range")
    return value


def _refuse_constant(text):
    raise ValueError("NaN or Infinity")


def _checked_int(text):
    digits = text[1:] if text.startswith("-") else text
    if text == "-0" or len(digits) > 16:  # 2^53 - 1 has 16 digits: no 4000-digit int() is ever built
        raise ValueError("an integer out of range")
    value = int(text)
    if abs(value) > MAX_SAFE_INTEGER:
        raise ValueError("an integer out of range")
    return value


def parse_lenient(data, floats=False):
    """A JSON value from UTF-8 bytes, under the value rules; JsonError otherwise.

    Whitespace and key order are free.  Refused: a BOM, invalid UTF-8,
    duplicate keys, NaN/Infinity, integers outside +-(2^53 - 1), -0, lone
    surrogates, nesting deeper than MAX_JSON_DEPTH, and floats unless
    `floats` (then only finite ones).  The depth is counted by a linear scan
    before json.loads runs, so a 100,000-deep document costs one pass
    instead of a RecursionError.  Nothing but JsonError ever escapes.
    """
    try:
        if bytes(data[:3]) == _JSON_BOM:
            raise ValueError("a byte-order mark")
        text = str(data, "utf-8")  # strict: invalid UTF-8 raises
        check_depth(text)
        value = json.loads(text, object_pairs_hook=_unique_pairs,
                           parse_float=_finite_float if floats else _refuse_float,
                           parse_constant=_refuse_constant, parse_int=_checked_int)
        canonical_bytes(value)  # a lone surrogate from a \ud800 escape cannot be encoded
    except Exception:  # RecursionError and MemoryError included: the parser's only error is its own
        raise JsonError() from None
    return value


def check_depth(text):
    """ValueError when the JSON `text` nests deeper than MAX_JSON_DEPTH: one linear scan, before any parser."""
    depth = 0
    for match in _JSON_TOKEN_RE.finditer(text):  # strings are skipped whole, so brackets in them do not count
        token = match.group()
        if token == "[" or token == "{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise ValueError("nested too deep")
        elif token == "]" or token == "}":
            depth -= 1


def parse_canonical(data, floats=False, ascii=False):
    """The lenient parser, plus: re-encoding the value gives back `data` exactly."""
    value = parse_lenient(data, floats)
    if canonical_bytes(value, ascii) != data:
        raise JsonError("not the canonical encoding")
    return value


def same(value, expected):
    """Equal as JSON: the same canonical encoding, so True is not 1 and "1" is not 1."""
    try:
        return canonical_bytes(value) == canonical_bytes(expected)
    except (TypeError, ValueError):
        return False


def is_int(value):
    """A JSON integer; True and False are not integers here."""
    return isinstance(value, int) and not isinstance(value, bool)
