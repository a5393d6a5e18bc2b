"""The [EDIT] constants of nodes/crawler_job.py, each turned, and the checks that touch it (conformance/knobs.py).

A deployment constant (contract/crawler.md, D21) is turned together with the
--deploy assignment that gives the harness the same value: the node and the
fakes then agree on another platform's values, and the machinery below KEEP
must follow the constant (the :redeem bound from the request bound, the child
input header's bound from it too, the PUT's headers from the media type and
the result bound, the codes a child may name).
"""

from conformance.knobs import Knob

KNOBS = [
    Knob("PROGRAM", '"my-crawler-job"', why="any name: the usage text's and the development line's",
         checks=["argv.help", "argv.usage-no-echo", "node.help", "config.storage-emulator-http"]),
    Knob("IO_CHUNK_BYTES", "256 * 1024 + 3",
         why="any size of 1 byte or more: an odd one shows that nothing assumes a block alignment",
         checks=["stream.memory-flat", "child.input", "child.stdout-bound", "upload.body", "upload.wire",
                 "fetch.too-large-streamed", "fetch.truncated", "child.own-mode", "stop.put-body"]),
    Knob("MAX_CRAWLER_RESULT_BYTES", "4 * 1024 * 1024", deploy="MAX_CRAWLER_RESULT_BYTES=4194304",
         why="the platform's result bound (1 MiB..2 GiB in the harness)",
         checks=["cap.keys-constants", "cap.headers", "cap.accepted", "child.stdout-bound", "boot.strict-request",
                 "upload.wire"]),
    Knob("RESULT_MEDIA_TYPE", '"application/vnd.example.crawler-result+json"',
         deploy="RESULT_MEDIA_TYPE=application/vnd.example.crawler-result+json",
         why="the platform's media type: a lowercase type/subtype",
         checks=["cap.headers", "upload.wire", "report.bundle"]),
    Knob("CHILD_ATTESTATION_ENV", '"EXAMPLE_EGRESS_ATTESTATION"',
         deploy="CHILD_ATTESTATION_ENV=EXAMPLE_EGRESS_ATTESTATION",
         why="the platform's variable name: upper case, not a thread pin",
         checks=["child.env", "child.own-mode"]),
    Knob("CHILD_CODES", 'frozenset(("CRAWLER_NORMALIZATION_FAILED", "CRAWLER_SOURCE_ENCODING_UNSUPPORTED", '
                        '"CRAWLER_LIMIT_EXCEEDED", "CRAWLER_SOURCE_TOO_LARGE"))',
         deploy="CHILD_CODES=CRAWLER_LIMIT_EXCEEDED,CRAWLER_NORMALIZATION_FAILED,CRAWLER_SOURCE_ENCODING_UNSUPPORTED,"
                "CRAWLER_SOURCE_TOO_LARGE",
         why="the three the node's own child mode names, and any codes of the bundle vocabulary",
         checks=["child.admitted-code", "child.refused-code", "peer.child-line-spaced", "norm.child-protocol"]),
    Knob("REQUEST_SCHEMA", '"example-crawler-request.v4"', deploy="REQUEST_SCHEMA=example-crawler-request.v4",
         why="the platform's request schema string",
         checks=["boot.strict-request", "peer.request-members", "report.success", "child.input"]),
    Knob("RESULT_SCHEMA", '"example-crawler-result.v4"', deploy="RESULT_SCHEMA=example-crawler-result.v4",
         why="the platform's result schema string: the node's own child mode writes it, the node checks it",
         checks=["result.keys", "child.own-mode", "report.success", "upload.body"]),
    Knob("FAILURE_SCHEMA", '"example-crawler-failure.v2"', deploy="FAILURE_SCHEMA=example-crawler-failure.v2",
         why="the platform's failure bundle schema string",
         checks=["report.bundle", "child.admitted-code", "stop.fetch"]),
    Knob("MAX_CRAWLER_REQUEST_BYTES", "128 * 1024", deploy="MAX_CRAWLER_REQUEST_BYTES=131072",
         why="the platform's request bound (16 KiB..16 MiB in the harness); the :redeem bound follows it",
         checks=["boot.oversize", "boot.oversize-any-status", "boot.strict-response", "fail.allowlist",
                 "report.no-traceback", "child.own-mode"]),
]

NOT_KNOBS = {
    "_UTF8_BOM": "a fact of UTF-8 (the byte-order mark's three bytes) that the reference normaliser refuses, "
                 "not a setting",
}
