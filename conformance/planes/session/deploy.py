"""The session contract's deployment constants (contract/session.md D38).

The upstream session worker imports these values from modules of its platform
that are not in its source (the generated control-plane client, hosted_worker,
session_probes, progress_events, hosted_crawler_protocol), so the contract's
values are guesses, and a real deployment may use others.  A node keeps each in
its section 2 under the name below; `--deploy NAME=VALUE` gives the harness the
same value for a run (conformance/deployment.py).  _deploy() rebinds this
module's names, so every fake and check reads them as ``deploy.NAME`` at call
time, never at import:

    from conformance.planes.session import deploy
    deploy.templates()["claim"]           # ("POST", deploy.CLAIM_PATH_TEMPLATE, 200)
    deploy.PROBE_RESULT_MAX_BYTES
"""

import collections
import re

__all__ = ["make_deployment", "templates", "values", "SETTINGS"]

# The producer callbacks (section *Callbacks*): verb -> (name of its constant, method, the
# status the contract's fake answers with).
_VERBS = collections.OrderedDict([
    ("start", ("START_PATH_TEMPLATE", "POST", 200)),
    ("heartbeat", ("HEARTBEAT_PATH_TEMPLATE", "POST", 200)),
    ("append", ("EVENTS_PATH_TEMPLATE", "POST", 200)),
    ("claim", ("CLAIM_PATH_TEMPLATE", "POST", 200)),
    ("report", ("RESULT_PATH_TEMPLATE", "POST", 200)),
    ("acquire", ("ACQUISITIONS_PATH_TEMPLATE", "POST", 201)),
    ("read", ("ACQUISITION_PATH_TEMPLATE", "GET", 200)),
])
# The ids each template must name: the attempt's everywhere, and its own.
_PATH_IDS = {"report": ("attempt_id", "probe_id"), "read": ("attempt_id", "crawler_session_id")}

START_PATH_TEMPLATE = "/internal/v3/producer/attempts/{attempt_id}:start"
HEARTBEAT_PATH_TEMPLATE = "/internal/v3/producer/attempts/{attempt_id}:heartbeat"
EVENTS_PATH_TEMPLATE = "/internal/v3/producer/attempts/{attempt_id}/events:append"
CLAIM_PATH_TEMPLATE = "/internal/v3/producer/attempts/{attempt_id}/probes:claim"
RESULT_PATH_TEMPLATE = "/internal/v3/producer/attempts/{attempt_id}/probes/{probe_id}:result"
ACQUISITIONS_PATH_TEMPLATE = "/internal/v3/producer/attempts/{attempt_id}/session-acquisitions"
ACQUISITION_PATH_TEMPLATE = "/internal/v3/producer/attempts/{attempt_id}/session-acquisitions/{crawler_session_id}"
MIN_CAPABILITY_BYTES = 39
MAX_CAPABILITY_BYTES = 263
PROBE_SCHEMA_VERSION = "1.0.0"
PROBE_RESULT_MAX_BYTES = 65536
MAX_PROFILE_COLUMNS = 64
MAX_SCAN_ROWS = 100000
MAX_SAMPLE_OFFSET = 1000000
MAX_SAMPLE_LIMIT = 200
PROBE_OK_CODE = "OK"
MAX_PROGRESS_EVENTS_PER_ATTEMPT = 256
CRAWLER_RESULT_SCHEMAS = ("mostlyright-crawler-result.v3", "mostlyright-crawler-result.v1")

# The callback prefix every allowed path has (a seed fact, not a deployment's choice).
CALLBACK_PREFIX = "/internal/v3/producer/"
CAPABILITY_PREFIX = "mr_cap_"
_PLACEHOLDER_RE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_PATH_TEXT_RE = re.compile(r"[A-Za-z0-9._~!$&'()*+,;=:@/{}-]+")
_VERSION_RE = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}")
_CODE_RE = re.compile(r"[A-Z][A-Z0-9_]{2,127}")
_SCHEMA_RE = re.compile(r"[a-z0-9][a-z0-9._-]{0,127}")
# Bounds on a deployed bound: below these the checks' own fixtures no longer fit (a result
# must hold a few rows of a few columns; a session narrates at least its start and two probes).
MIN_DEPLOYED = {"PROBE_RESULT_MAX_BYTES": 4096, "MAX_PROFILE_COLUMNS": 4, "MAX_SCAN_ROWS": 100,
                "MAX_SAMPLE_OFFSET": 100, "MAX_SAMPLE_LIMIT": 10, "MAX_PROGRESS_EVENTS_PER_ATTEMPT": 16,
                "MIN_CAPABILITY_BYTES": 8, "MAX_CAPABILITY_BYTES": 16}
MAX_DEPLOYED = {"PROBE_RESULT_MAX_BYTES": 1 << 24, "MAX_PROFILE_COLUMNS": 4096, "MAX_SCAN_ROWS": 1 << 31,
                "MAX_SAMPLE_OFFSET": 1 << 40, "MAX_SAMPLE_LIMIT": 100000,
                "MAX_PROGRESS_EVENTS_PER_ATTEMPT": 1 << 20, "MIN_CAPABILITY_BYTES": 1024,
                "MAX_CAPABILITY_BYTES": 4096}


def templates():
    """verb -> (method, path template in force, the fake's success status), in the table's order."""
    return collections.OrderedDict((verb, (method, globals()[name], status))
                                   for verb, (name, method, status) in _VERBS.items())


def template_ids(template):
    """The placeholder names of a template, in order."""
    return _PLACEHOLDER_RE.findall(template)


def _path_parser(verb):
    name = _VERBS[verb][0]

    def parse(text):
        if not text.startswith(CALLBACK_PREFIX) or not _PATH_TEXT_RE.fullmatch(text):
            raise ValueError("a path under %s" % CALLBACK_PREFIX)
        found = template_ids(text)
        wanted = _PATH_IDS.get(verb, ("attempt_id",))
        if sorted(found) != sorted(wanted) or "{" in _PLACEHOLDER_RE.sub("", text) \
                or "}" in _PLACEHOLDER_RE.sub("", text) or "//" in text:
            raise ValueError("%s names exactly %s, each once" % (name, ", ".join("{%s}" % w for w in wanted)))
        if re.search(r"\}\{", text):
            raise ValueError("two placeholders side by side cannot be told apart")
        return text
    return parse


# The contract's values as its schemas write them (contract/schemas/session/), and the deployment
# constant each stands for: a schema is judged with the values in force (deployed_schema()).
_SCHEMA_VALUES = (("const", "1.0.0", "PROBE_SCHEMA_VERSION"), ("maxItems", 64, "MAX_PROFILE_COLUMNS"),
                  ("maxItems", 200, "MAX_SAMPLE_LIMIT"))
# The schemas that carry them: a probe result, and the report that holds one.
_DEPLOYED_SCHEMAS = ("probe-result", "probe-report")


def deployed_schema(name, schema):
    """A copy of the session schema `name` with the contract's values replaced by those in force."""
    if name not in _DEPLOYED_SCHEMAS:
        return schema
    replace = dict(((key, value), globals()[setting]) for key, value, setting in _SCHEMA_VALUES)

    def visit(node):
        if isinstance(node, dict):
            return dict((key, replace.get((key, item), item) if not isinstance(item, (dict, list))
                         else visit(item)) for key, item in node.items())
        if isinstance(node, list):
            return [visit(item) for item in node]
        return node
    return visit(schema)


def _int_parser(name):
    def parse(text):
        if not re.fullmatch(r"[1-9][0-9]{0,12}", text):
            raise ValueError("a whole number, written in digits")
        value = int(text)
        if not MIN_DEPLOYED[name] <= value <= MAX_DEPLOYED[name]:
            raise ValueError("must be %d..%d" % (MIN_DEPLOYED[name], MAX_DEPLOYED[name]))
        return value
    return parse


def _parse_version(text):
    if not _VERSION_RE.fullmatch(text):
        raise ValueError("a version text such as 1.0.0")
    return text


def _parse_code(text):
    if not _CODE_RE.fullmatch(text):
        raise ValueError("a code: [A-Z][A-Z0-9_]{2,127}")
    return text


def _parse_schemas(text):
    schemas = tuple(item.strip() for item in text.split(",") if item.strip())
    if not schemas or not all(_SCHEMA_RE.fullmatch(item) for item in schemas):
        raise ValueError("schema strings, comma-separated (lower case, digits, . _ -)")
    return schemas


def _deploy(found):
    if found["MIN_CAPABILITY_BYTES"] > found["MAX_CAPABILITY_BYTES"] or \
            found["MIN_CAPABILITY_BYTES"] <= len(CAPABILITY_PREFIX):
        raise ValueError("MIN_CAPABILITY_BYTES must be above %d (the prefix %s) and at most MAX_CAPABILITY_BYTES"
                         % (len(CAPABILITY_PREFIX), CAPABILITY_PREFIX))
    globals().update(found)


def values():
    """The values in force, by setting name."""
    return dict((setting.name, globals()[setting.name]) for setting in SETTINGS)


def _settings():
    from conformance.deployment import Setting
    found = [Setting(name, globals()[name], _path_parser(verb), help="the %s callback's path template" % verb)
             for verb, (name, _method, _status) in _VERBS.items()]
    found += [
        Setting("MIN_CAPABILITY_BYTES", MIN_CAPABILITY_BYTES, _int_parser("MIN_CAPABILITY_BYTES"),
                help="the shortest capability, mr_cap_ included"),
        Setting("MAX_CAPABILITY_BYTES", MAX_CAPABILITY_BYTES, _int_parser("MAX_CAPABILITY_BYTES"),
                help="the longest capability, mr_cap_ included"),
        Setting("PROBE_SCHEMA_VERSION", PROBE_SCHEMA_VERSION, _parse_version,
                help="every probe result's schema_version"),
        Setting("PROBE_RESULT_MAX_BYTES", PROBE_RESULT_MAX_BYTES, _int_parser("PROBE_RESULT_MAX_BYTES"),
                help="bytes of a probe result's canonical encoding"),
        Setting("MAX_PROFILE_COLUMNS", MAX_PROFILE_COLUMNS, _int_parser("MAX_PROFILE_COLUMNS"),
                help="columns a request names and a result lists by default"),
        Setting("MAX_SCAN_ROWS", MAX_SCAN_ROWS, _int_parser("MAX_SCAN_ROWS"), help="the ceiling of scan_rows"),
        Setting("MAX_SAMPLE_OFFSET", MAX_SAMPLE_OFFSET, _int_parser("MAX_SAMPLE_OFFSET"),
                help="the ceiling of a sample window's offset"),
        Setting("MAX_SAMPLE_LIMIT", MAX_SAMPLE_LIMIT, _int_parser("MAX_SAMPLE_LIMIT"),
                help="the ceiling of a sample window's limit"),
        Setting("PROBE_OK_CODE", PROBE_OK_CODE, _parse_code, help="a settled event's code on success"),
        Setting("MAX_PROGRESS_EVENTS_PER_ATTEMPT", MAX_PROGRESS_EVENTS_PER_ATTEMPT,
                _int_parser("MAX_PROGRESS_EVENTS_PER_ATTEMPT"), help="the events one attempt makes"),
        Setting("CRAWLER_RESULT_SCHEMAS", CRAWLER_RESULT_SCHEMAS, _parse_schemas, show=",".join,
                help="a bundle's accepted schema_version strings (comma-separated; fixtures carry the first)"),
    ]
    return found


SETTINGS = _settings()


def make_deployment():
    from conformance.deployment import Deployment
    return Deployment(SETTINGS, _deploy)
