"""The scan contract's deployment constants (contract/scan.md D30): --deploy NAME=VALUE.

The upstream takes four values from modules of its platform that are not in the seed; the
contract gives its guesses, a node keeps them in section 2, and a deployment whose scan server
uses other values changes them there and judges the node with the same ones:

    python3 -m conformance scan my_worker.py --deploy BUNDLE_FORMAT=acme-bundle/2

The fakes and checks read the values in force from this module at call time (deploy.BUNDLE_FORMAT),
never a copy taken at import.
"""

import json
import re

# The contract's values (D30), as section 2 of nodes/scan_worker.py spells them.
DEFAULTS = {
    "CLAIM_BUILD": {"capabilities": "$capabilities", "code_sha256": "$code_sha256", "node": "$node", "protocol": 2,
                    "version": "$version"},
    "BUNDLE_FORMAT": "scan-bundle/1",
    "MAX_BUNDLE_LINE_BYTES": 65536,
    "MAX_PENDING_BYTES": 1048576,
}
# The placeholders a CLAIM_BUILD may hold, and what the claim must carry in their place.
PLACEHOLDERS = ("$capabilities", "$code_sha256", "$node", "$version")
# A deployed line bound below this leaves no room for the checks' own bundle lines (a filler event
# of about 1 KiB, a finding of a few hundred bytes); above it, one line could be most of a bundle.
MIN_LINE_BYTES, MAX_LINE_BYTES = 4096, 16 * 1048576
# A deployed state bound below this cannot hold the checks' assignments; above it, an answer
# costs more memory than a worker should risk (D15).
MIN_PENDING_BYTES, MAX_PENDING_BYTES_LIMIT = 65536, 64 * 1048576
_FORMAT_RE = re.compile(r"[!-~]{1,64}")

CLAIM_BUILD = DEFAULTS["CLAIM_BUILD"]
BUNDLE_FORMAT = DEFAULTS["BUNDLE_FORMAT"]
MAX_BUNDLE_LINE_BYTES = DEFAULTS["MAX_BUNDLE_LINE_BYTES"]
MAX_PENDING_BYTES = DEFAULTS["MAX_PENDING_BYTES"]


def _placeholders(node):
    if isinstance(node, str):
        return [node] if node in PLACEHOLDERS else []
    if isinstance(node, dict):
        return [p for item in node.values() for p in _placeholders(item)]
    if isinstance(node, list):
        return [p for item in node for p in _placeholders(item)]
    return []


def _parse_build(text):
    try:
        value = json.loads(text)
    except ValueError:
        raise ValueError("JSON text of an object, e.g. '{\"protocol\": 3, \"capabilities\": \"$capabilities\"}'") \
            from None
    if not isinstance(value, dict):
        raise ValueError("a JSON object")
    found = _placeholders(value)
    if found.count("$code_sha256") != 1 or found.count("$capabilities") != 1:
        raise ValueError("holds $capabilities and $code_sha256 exactly once each (the server tells builds apart by "
                         "them)")
    return value


def _show_build(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _parse_format(text):
    if not _FORMAT_RE.fullmatch(text):
        raise ValueError("1 to 64 printable ASCII characters, no space")
    return text


def _whole(low, high):
    def parse(text):
        if not re.fullmatch(r"[1-9][0-9]{0,9}", text):
            raise ValueError("a whole number of bytes, written in digits")
        if not low <= int(text) <= high:
            raise ValueError("must be %d..%d" % (low, high))
        return int(text)
    return parse


def _apply(values):
    global CLAIM_BUILD, BUNDLE_FORMAT, MAX_BUNDLE_LINE_BYTES, MAX_PENDING_BYTES
    CLAIM_BUILD = values["CLAIM_BUILD"]
    BUNDLE_FORMAT = values["BUNDLE_FORMAT"]
    MAX_BUNDLE_LINE_BYTES = values["MAX_BUNDLE_LINE_BYTES"]
    MAX_PENDING_BYTES = values["MAX_PENDING_BYTES"]


def make_deployment():
    from conformance.deployment import Deployment, Setting
    return Deployment([
        Setting("CLAIM_BUILD", DEFAULTS["CLAIM_BUILD"], _parse_build, show=_show_build,
                help="the claim's build document, JSON, with $capabilities, $code_sha256, $node, $version"),
        Setting("BUNDLE_FORMAT", DEFAULTS["BUNDLE_FORMAT"], _parse_format, help="the bundle header's format"),
        Setting("MAX_BUNDLE_LINE_BYTES", DEFAULTS["MAX_BUNDLE_LINE_BYTES"], _whole(MIN_LINE_BYTES, MAX_LINE_BYTES),
                help="one bundle line, its newline included"),
        Setting("MAX_PENDING_BYTES", DEFAULTS["MAX_PENDING_BYTES"], _whole(MIN_PENDING_BYTES, MAX_PENDING_BYTES_LIMIT),
                help="a slot state (which keeps the assignment) and any answer"),
    ], _apply)


def build_problems(build, capabilities_ok, digest_ok):
    """What is off in a claim's build against the CLAIM_BUILD in force: each placeholder's value is
    judged by the function given (capabilities_ok(value), digest_ok(value)) or as a non-empty string
    ($node, $version); everything else must equal the template."""
    found = []

    def walk(template, value, where):
        if isinstance(template, str) and template in PLACEHOLDERS:
            ok = (capabilities_ok(value) if template == "$capabilities" else digest_ok(value)
                  if template == "$code_sha256" else isinstance(value, str) and bool(value))
            if not ok:
                found.append("%s is not what %s stands for" % (where or "build", template))
        elif isinstance(template, dict):
            if not isinstance(value, dict) or sorted(value) != sorted(template):
                found.append("%s is not exactly %s" % (where or "build", ", ".join(sorted(template))))
                return
            for key in template:
                walk(template[key], value[key], "%s.%s" % (where or "build", key))
        elif isinstance(template, list):
            if not isinstance(value, list) or len(value) != len(template):
                found.append("%s is not a list of %d" % (where or "build", len(template)))
                return
            for index, (item, got) in enumerate(zip(template, value)):
                walk(item, got, "%s[%d]" % (where or "build", index))
        elif json.dumps(template) != json.dumps(value):
            found.append("%s is %s, not %s" % (where or "build", json.dumps(value)[:40], json.dumps(template)))
    walk(CLAIM_BUILD, build, "")
    return found
