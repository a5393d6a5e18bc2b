"""The [EDIT] constants of nodes/session_worker.py, each turned, and the checks that touch it (conformance/knobs.py).

Sections 2 and 3 of the node: its name and chunk size, the deployment constants (contract D38: each
also told to the harness with --deploy), and the reference prober's preview marker.  A copy that
sets any of them to another value of its domain keeps every platform check below passing: the
machinery under KEEP derives the paths, the capability's grammar, the bounds, the codes and the
cell bound from these names.
"""

from conformance.knobs import Knob

# Other callback paths a deployment's generated client might use: one prefix of its own, every
# verb renamed, the ids where the contract has them (D38).
_PATHS = {
    "START_PATH_TEMPLATE": "/internal/v3/producer/session-attempts/{attempt_id}:begin",
    "HEARTBEAT_PATH_TEMPLATE": "/internal/v3/producer/session-attempts/{attempt_id}:beat",
    "EVENTS_PATH_TEMPLATE": "/internal/v3/producer/session-attempts/{attempt_id}/events",
    "CLAIM_PATH_TEMPLATE": "/internal/v3/producer/session-attempts/{attempt_id}/probe-claims",
    "RESULT_PATH_TEMPLATE": "/internal/v3/producer/session-attempts/{attempt_id}/probe-results/{probe_id}",
    "ACQUISITIONS_PATH_TEMPLATE": "/internal/v3/producer/session-attempts/{attempt_id}/acquisitions",
    "ACQUISITION_PATH_TEMPLATE": "/internal/v3/producer/session-attempts/{attempt_id}/acquisitions/"
                                 "{crawler_session_id}",
}
# The checks a path touches: the verbs on the wire, the lease's allowlist in our and the upstream's
# forms, a refusal of one verb, a report found by its path.
_PATH_CHECKS = ["callback.verbs", "callback.allowed-paths", "lease.callbacks", "peer.lease-paths",
                "report.transient-retry", "acquire.read-refusals"]

KNOBS = [
    Knob("PROGRAM", '"my-session-worker"', why="any name: the usage text's and stderr lines' prefix",
         checks=["argv.help", "argv.usage", "config.endpoints"]),
    Knob("IO_CHUNK_BYTES", "4096", why="any chunk from 1 KiB up: downloads, child pipes and buffers read in it",
         checks=["acquire.download", "probe.relations", "isolation.child-protocol", "dispatch.bounded-answer"]),
] + [
    Knob(name, repr(path), why="a deployment's path for the verb, under the producer prefix, with its ids",
         checks=_PATH_CHECKS, deploy="%s=%s" % (name, path))
    for name, path in sorted(_PATHS.items())
] + [
    Knob("MIN_CAPABILITY_BYTES", "47", why="the shortest capability a deployment mints, mr_cap_ included",
         checks=["lease.capability"], deploy="MIN_CAPABILITY_BYTES=47"),
    Knob("MAX_CAPABILITY_BYTES", "300", why="the longest capability a deployment mints",
         checks=["lease.capability"], deploy="MAX_CAPABILITY_BYTES=300"),
    Knob("PROBE_SCHEMA_VERSION", '"1.1.0"', why="the vocabulary version a deployment's session_probes writes",
         checks=["probe.result-bound", "probe.relations"], deploy="PROBE_SCHEMA_VERSION=1.1.0"),
    Knob("PROBE_RESULT_MAX_BYTES", "128 * 1024", why="a larger result bound",
         checks=["probe.relations", "probe.result-bound"], deploy="PROBE_RESULT_MAX_BYTES=131072"),
    Knob("MAX_PROFILE_COLUMNS", "32", why="fewer columns per request and result",
         checks=["probe.vocabulary", "probe.relations", "probe.result-bound"], deploy="MAX_PROFILE_COLUMNS=32"),
    Knob("MAX_SCAN_ROWS", "200000", why="a larger scan ceiling", checks=["probe.vocabulary", "probe.relations"],
         deploy="MAX_SCAN_ROWS=200000"),
    Knob("MAX_SAMPLE_OFFSET", "2000000", why="a later window", checks=["probe.vocabulary", "probe.relations"],
         deploy="MAX_SAMPLE_OFFSET=2000000"),
    Knob("MAX_SAMPLE_LIMIT", "500", why="longer windows", checks=["probe.vocabulary", "probe.relations"],
         deploy="MAX_SAMPLE_LIMIT=500"),
    Knob("PROBE_OK_CODE", '"SUCCEEDED"', why="a deployment's success code on the event stream",
         checks=["progress.settled-facts", "progress.events"], deploy="PROBE_OK_CODE=SUCCEEDED"),
    Knob("MAX_PROGRESS_EVENTS_PER_ATTEMPT", "128", why="a smaller event cap",
         checks=["progress.cap", "progress.events"], deploy="MAX_PROGRESS_EVENTS_PER_ATTEMPT=128"),
    Knob("CRAWLER_RESULT_SCHEMAS", '("mostlyright-crawler-result.v4", "mostlyright-crawler-result.v3")',
         why="the result schemas a deployment's crawler writes",
         checks=["acquire.bundle", "peer.bundle-forms", "peer.bundle-csv"],
         deploy="CRAWLER_RESULT_SCHEMAS=mostlyright-crawler-result.v4,mostlyright-crawler-result.v3"),
    Knob("PREVIEW_MARKER", '"..."', why="any text of at most MAX_PREVIEW_MARKER_CHARS (16) ends a cut string",
         checks=["probe.relations", "probe.result-bound"]),
]

NOT_KNOBS = {
    "_CSV_INTEGER_RE": "a private helper of the reference prober (SESSION-WORK-1): its form is the example's",
    "_CSV_FLOAT_RE": "a private helper of the reference prober (SESSION-WORK-1)",
    "_MAX_INTEGER_DIGITS": "a private helper of the reference prober: 2^53 - 1 has 16 digits",
    "_MAX_CELL_INTEGER": "a private helper of the reference prober: the canonical integer range (SESSION-WORK-1, -6)",
    "_ORDER_CLASS": "a private table of the reference prober: which inferred types compare",
    "_COMPARE": "a private table of the reference prober: the operators of SESSION-WORK-5",
}
