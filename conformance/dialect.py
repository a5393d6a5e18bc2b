"""Peer variety: our documents rewritten as the upstream's real peers may write them.

A node stands in for its upstream program against that program's real
servers, which nobody here has seen.  Where the upstream reads a document
leniently (`json.loads`, `.get()`, `fromisoformat`, members it never looks
at), a real server may send what our own contract never shows: a member added
in a later release, `5.0` where we write `5`, an instant with an offset
instead of `Z`.  A fake that serves only our exact shapes proves nothing about
that server, so each plane can serve a *variant* of a document, built here
from the document it would have served, and its checks (area PEER of each
contract) run the node against it.

The rewrites change the text, never what the upstream would read from it:

    unknown_members(doc)          a member nobody defined, in every object (or the top one)
    floats(doc, {"retry_after"})  whole numbers written as 5.0, in the members named
    instant(dt, "offset")         the same instant as text in another ISO 8601 form

Which rewrite is legal for which document is the contract's question, answered
from the seed (../shared/seeds/): a document bound by a digest or a signature
over its bytes cannot gain a member, and a number the upstream compares with
`isinstance(x, int)` cannot become a float.
"""

import copy
import datetime

# The name of the member unknown_members adds: obviously nobody's, and sorted
# after every member our contracts define, so canonical forms put it last.
UNKNOWN_MEMBER = "zz_added_by_a_later_release"
# Its value holds each JSON type, so a node that walks into it meets them all.
UNKNOWN_VALUE = {"flag": True, "items": [1, 2.5, "three", None], "note": "ignore me"}

INSTANT_FORMS = ("Z", "+00:00", "fraction", "offset", "offset-fraction")


def unknown_members(doc, top_only=False, name=UNKNOWN_MEMBER, value=None):
    """A deep copy of doc with member `name` added to every object (to the top one only with top_only).

    An object that already has `name` keeps its own value.
    """
    added = copy.deepcopy(UNKNOWN_VALUE if value is None else value)

    def visit(node, top):
        if isinstance(node, dict):
            result = dict((key, visit(item, False) if not top_only else item) for key, item in node.items())
            if (top or not top_only) and name not in result:
                result[name] = copy.deepcopy(added)
            return result
        if isinstance(node, list) and not top_only:
            return [visit(item, False) for item in node]
        return node

    return visit(copy.deepcopy(doc), True)


def floats(doc, names):
    """A deep copy of doc where every integer value of a member named in `names` is a float (5 -> 5.0).

    Booleans stay booleans; integers beyond 2**53 are refused, since their
    float would be another number.
    """
    names = frozenset(names)

    def visit(node):
        if isinstance(node, dict):
            result = {}
            for key, item in node.items():
                if key in names and isinstance(item, int) and not isinstance(item, bool):
                    if abs(item) > 2 ** 53:
                        raise ValueError("%s = %d has no exact float" % (key, item))
                    result[key] = float(item)
                else:
                    result[key] = visit(item)
            return result
        if isinstance(node, list):
            return [visit(item) for item in node]
        return node

    return visit(copy.deepcopy(doc))


def instant(moment, form):
    """The aware datetime `moment` as ISO 8601 text in one of INSTANT_FORMS.

    Z                2026-12-04T20:15:00Z
    +00:00           2026-12-04T20:15:00+00:00
    fraction         2026-12-04T20:15:00.250000Z   (the moment's microseconds, or .000000)
    offset           2026-12-05T01:45:00+05:30     (the same instant, another zone)
    offset-fraction  2026-12-04T15:15:00.250000-05:00
    """
    if moment.tzinfo is None:
        raise ValueError("an aware datetime is needed")
    utc = moment.astimezone(datetime.timezone.utc)
    if form == "Z":
        return utc.isoformat().replace("+00:00", "Z")
    if form == "+00:00":
        return utc.isoformat()
    if form == "fraction":
        return utc.isoformat(timespec="microseconds").replace("+00:00", "Z")
    if form == "offset":
        return utc.astimezone(datetime.timezone(datetime.timedelta(hours=5, minutes=30))).isoformat()
    if form == "offset-fraction":
        return utc.astimezone(datetime.timezone(datetime.timedelta(hours=-5))).isoformat(timespec="microseconds")
    raise ValueError("unknown instant form %r (known: %s)" % (form, ", ".join(INSTANT_FORMS)))
