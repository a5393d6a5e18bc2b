"""The [EDIT] constants of nodes/scan_worker.py, each turned, and the checks that touch it (conformance/knobs.py)."""

import json

from conformance.knobs import Knob

# CLAIM_BUILD as another platform may want it: nested, renamed, another protocol.
OTHER_BUILD = {"worker": {"capabilities": "$capabilities", "code": "$code_sha256"}, "protocol": 3, "name": "$node",
               "release": "$version"}

KNOBS = [
    Knob("PROGRAM", '"my-scan-worker"', why="any name: the usage text and the usage line's prefix",
         checks=["argv.usage", "argv.help"]),
    Knob("NODE_NAME", '"acme-scanner"', why="any non-empty name of the node in the claim's build",
         checks=["claim.request"]),
    Knob("NODE_VERSION", '"7.2.0-rc1"', why="any non-empty version in the claim's build",
         checks=["claim.request"]),
    Knob("CLAIM_BUILD", json.dumps(OTHER_BUILD), why="any JSON object holding $capabilities and $code_sha256 once "
         "(a deployment constant, D30)", checks=["claim.request", "claim.persisted-first"],
         deploy="CLAIM_BUILD=" + json.dumps(OTHER_BUILD)),
    Knob("BUNDLE_FORMAT", '"acme-bundle/2"', why="any format string of 1..64 printable characters (D30)",
         checks=["bundle.envelope", "bundle.record", "reconcile.accepted-bytes", "upload.streamed"],
         deploy="BUNDLE_FORMAT=acme-bundle/2"),
    Knob("MAX_BUNDLE_LINE_BYTES", "32 * 1024", why="a line bound of 4 KiB or more (D30); the scan's pieces follow",
         checks=["bundle.envelope", "bundle.too-large", "runner.streamed"], deploy="MAX_BUNDLE_LINE_BYTES=32768"),
    Knob("MAX_PENDING_BYTES", "2 * 1024 * 1024", why="a state bound of 64 KiB or more (D30); the answer bound follows",
         checks=["http.bounded", "state.unreadable-kept", "claim.assignment-checked"],
         deploy="MAX_PENDING_BYTES=2097152"),
    Knob("CAPABILITIES", '(("gitlab", "cloud", "repositories"), ("fixture", "local", "files"))',
         why="any non-empty tuple of (source, platform, planning_kind) triples; the plane grants the first",
         checks=["claim.request", "bundle.envelope", "assign.incompatible", "upload.request",
                 "peer.assignment-members"]),
    Knob("SCAN_LINE_PIECE_BYTES", "MAX_BUNDLE_LINE_BYTES // 8", why="any piece no longer than a quarter of a line",
         checks=["bundle.envelope", "runner.streamed"]),
    Knob("SCAN_RULES", '(("aws_access_key_id", re.compile(r"AKIA[0-9A-Z]{16}")),)',
         why="any rules: the platform judges the bundle's envelope, not its findings",
         checks=["bundle.envelope", "bundle.record"]),
    Knob("SCAN_REDACTED_PREFIX_CHARS", "2", why="any short prefix of a match", checks=["bundle.envelope"]),
    Knob("SCAN_ELLIPSIS", '"..."', why="any short text after the prefix", checks=["bundle.envelope"]),
]
