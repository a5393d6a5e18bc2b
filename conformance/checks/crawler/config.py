"""Configuration: every variable is checked at start-up, in a fixed order, before any request.

CRAWLER-CONFIG-1..6 give each variable its shape (the results bucket, the two
bootstrap bases, the execution coordinate, the endpoint overrides, the egress
policy, the timeouts); CRAWLER-CONFIG-7 fixes the order in which they are
checked, so that the first failure names the code; CRAWLER-CONFIG-8 says what
the node must ignore (proxy variables) and never read (ambient credentials).

A refused configuration must leave every fake untouched: each variant asserts
"no network" (no identity request, no :redeem, no :fail, no source request, no
PUT, no tripwire connection) besides the status line. Variants run one short
node each, on a fresh plane, and the first that goes wrong is named.
"""

import json
import os
import time
import urllib.parse

from conformance.checks import check
from conformance.checks.crawler._common import (
    SESSION_ID, describe_run, docs, each_variant, expect_no_network, expect_outcome, expect_reported,
    expect_success)
from conformance.checks.crawler._common import run_variants
from conformance.planes.crawler import CRAWLER_RUN_TIMEOUT_S
from conformance.timeouts import POLL_INTERVAL_S, Deadline, node_hung

BUCKET_ENV = "MOSTLYRIGHT_CRAWLER_RESULTS_BUCKET"
AUDIENCE_BASE_ENV = "MOSTLYRIGHT_CRAWLER_BOOTSTRAP_AUDIENCE_BASE"
URL_BASE_ENV = "MOSTLYRIGHT_CRAWLER_BOOTSTRAP_URL_BASE"
EXECUTION_ENV = "CLOUD_RUN_EXECUTION"
METADATA_HOST_ENV = "GCE_METADATA_HOST"
STORAGE_ENV = "STORAGE_EMULATOR_HOST"
POLICY_ENV = "MOSTLYRIGHT_CRAWLER_EGRESS_POLICY"
TIMEOUT_ENV = "MOSTLYRIGHT_CRAWLER_%s_TIMEOUT_S"

CONFIG_INVALID = "CRAWLER_BOOTSTRAP_CONFIGURATION_INVALID"

# Not a canonical UUID (uppercase): wrong, but checked after the bucket and
# before every other variable (CRAWLER-CONFIG-7).
BAD_SESSION_ID = SESSION_ID.upper()

# One wrong value per variable checked after the session id: the "everything
# else is wrong too" arrangement of the ordering checks (CRAWLER-CONFIG-7).
WRONG_AFTER_SESSION = [
    ("audience base", {AUDIENCE_BASE_ENV: "http://studio.conformance.test/v1/crawler-sessions"}),
    ("URL base", {URL_BASE_ENV: "https://broker.conformance.test/v1/crawler-sessions/"}),
    ("execution coordinate", {EXECUTION_ENV: "Crawler_Job"}),
    ("metadata host", {METADATA_HOST_ENV: "http://169.254.169.254"}),
    ("storage origin", {STORAGE_ENV: "storage.conformance.test"}),
    ("egress policy", {POLICY_ENV: "{}"}),
    ("bootstrap timeout", {TIMEOUT_ENV % "BOOTSTRAP": "0"}),
]
EVERYTHING_WRONG = {}
for _label, _env in WRONG_AFTER_SESSION:
    EVERYTHING_WRONG.update(_env)

# Results buckets CRAWLER-CONFIG-1's pattern refuses (None: unset).
BAD_BUCKETS = [
    ("unset", None),
    ("empty", ""),
    ("uppercase", "A-bucket"),
    ("two characters", "ab"),
    ("64 characters", "a" * 64),
    ("ends with '-'", "bucket-"),
    ("starts with '.'", ".bucket"),
    ("trailing newline", "conformance-results\n"),
]

# Execution coordinates CRAWLER-CONFIG-3's pattern refuses (None: unset).
BAD_EXECUTIONS = [
    ("unset", None),
    ("empty", ""),
    ("uppercase", "Crawler-job-x7k2p"),
    ("64 characters", "a" * 64),
    ("leading '-'", "-crawler-job"),
    ("trailing '-'", "crawler-job-"),
    ("underscore", "crawler_job"),
    ("trailing newline", "crawler-job-x7k2p\n"),
]

# Timeouts CRAWLER-CONFIG-6 refuses: (label, kind, value).
BAD_TIMEOUTS = [
    ("bootstrap 0", "bootstrap", "0"),
    ("bootstrap 0.0", "bootstrap", "0.0"),
    ("bootstrap -1", "bootstrap", "-1"),
    ("bootstrap above its constant (10.5)", "bootstrap", "10.5"),
    ("bootstrap 1e3", "bootstrap", "1e3"),
    ("bootstrap abc", "bootstrap", "abc"),
    ("bootstrap empty", "bootstrap", ""),
    ("bootstrap ' 5'", "bootstrap", " 5"),
    ("bootstrap '5.'", "bootstrap", "5."),
    ("bootstrap '.5'", "bootstrap", ".5"),
    ("bootstrap '+5'", "bootstrap", "+5"),
    ("bootstrap '1_0' (float() reads 10)", "bootstrap", "1_0"),
    ("bootstrap nan", "bootstrap", "nan"),
    ("bootstrap Arabic-Indic digit", "bootstrap", "\u0665"),
    ("fetch above its constant (301)", "fetch", "301"),
    ("fetch abc", "fetch", "abc"),
    ("child above its constant (1801)", "child", "1801"),
    ("child abc", "child", "abc"),
    ("upload above its constant (601)", "upload", "601"),
    ("upload abc", "upload", "abc"),
]

# Timeouts CRAWLER-CONFIG-6 accepts: each such run must succeed.
GOOD_TIMEOUTS = [
    ("bootstrap 2.5", {"bootstrap": "2.5"}),
    ("each at its constant, leading zero and fraction allowed",
     {"bootstrap": "010", "fetch": "300", "child": "1800.0", "upload": "600"}),
]

# Proxy variables CRAWLER-CONFIG-8 tells the node to ignore.
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")

# Where Google client libraries look for ambient credentials: the variable,
# and the application-default file under CLOUDSDK_CONFIG and under HOME.
ADC_FILE = "application_default_credentials.json"


def _base_variants():
    """(label, transform) for every way a bootstrap base can break CRAWLER-CONFIG-2
    (D2, D3): transform(valid base) is the broken value, None meaning unset."""
    def parts(base):
        split = urllib.parse.urlsplit(base)
        netloc = split.hostname if split.port is None else "%s:%d" % (split.hostname, split.port)
        return split.hostname, split.port, split.path, netloc

    def at(port_text):
        def transform(base):
            host, _port, path, _netloc = parts(base)
            return "https://%s:%s%s" % (host, port_text, path)
        return transform

    def zero_padded(base):
        host, port, path, _netloc = parts(base)
        return "https://%s:0%d%s" % (host, port or 8443, path)

    def uppercase_host(base):
        host, port, path, _netloc = parts(base)
        upper = host.upper() if host.upper() != host else "LOCALHOST"   # an IP literal has no case
        return "https://%s%s%s" % (upper, "" if port is None else ":%d" % port, path)

    return [
        ("unset", lambda base: None),
        ("empty", lambda base: ""),
        ("http scheme", lambda base: "http://" + base[len("https://"):]),
        ("uppercase scheme", lambda base: "HTTPS://" + base[len("https://"):]),
        ("trailing '/'", lambda base: base + "/"),
        ("query ?x", lambda base: base + "?x"),
        ("empty query", lambda base: base + "?"),
        ("fragment #f", lambda base: base + "#f"),
        ("empty fragment", lambda base: base + "#"),
        ("port :443", at("443")),
        ("port :0443", at("0443")),
        ("empty port ':'", at("")),
        ("zero-padded port", zero_padded),
        ("port :0", at("0")),
        ("port :65536", at("65536")),
        ("userinfo user@", lambda base: "https://user@" + base[len("https://"):]),
        ("'%2F' in the path", lambda base: base + "%2Fx"),
        ("'//' in the path", lambda base: base + "//x"),
        ("'/./' in the path", lambda base: base + "/./x"),
        ("'/../' in the path", lambda base: base + "/../x"),
        ("ends with '/..'", lambda base: base + "/.."),
        ("ends with '/.'", lambda base: base + "/."),
        ("backslash in the path", lambda base: base + "\\x"),
        ("no path", lambda base: "https://" + parts(base)[3]),
        ("uppercase host", uppercase_host),
        ("longer than 2048 characters", lambda base: base + "/" + "a" * 2048),
    ]


def _expect_config_refused(ctx, plane, code, label):
    """The run ended with `code`, stderr-only, exit 1, before any request."""
    expect_outcome(ctx, plane, code, "failed", 1, label)
    expect_no_network(ctx, plane, label)


def _set_env(plane, env):
    """Set the variables of env on the plane's node (a value None removes it)."""
    for name, value in env.items():
        if value is None:
            plane.drop_env.append(name)
        else:
            plane.extra_env[name] = value


def _refuse_env(ctx, variants, code=CONFIG_INVALID, args=None):
    """Run one node per (label, env) variant and expect `code` before any
    request. env maps variables to values (None: unset), or is a function of
    the plane returning such a map (for values built from its ports)."""
    def act(label, env):
        # Arrange
        plane = ctx.plane()
        _set_env(plane, env(plane) if callable(env) else env)
        # Act
        plane.run(args=args)
        # Assert
        _expect_config_refused(ctx, plane, code, label)
        return plane

    run_variants(ctx, variants, act)


@check("config.bucket-first", clauses=["CRAWLER-CONFIG-1", "CRAWLER-CONFIG-7"], level="MUST",
       title="the results bucket is checked first: a bad one is named whatever else is wrong",
       fakes="a healthy plane whose results bucket is unset, empty, uppercase, 2 or 64 characters, ends with "
             "'-', starts with '.', or ends with a newline (one per run), each time with a non-canonical session "
             "id too; then an unset bucket with every other variable wrong as well",
       expected="CRAWLER_RESULTS_BUCKET_REQUIRED failed, exit 1, no request, in every variant")
def _(ctx):
    args = ["--crawler-session-id", BAD_SESSION_ID]
    variants = [(label + ", bad session id", {BUCKET_ENV: value}) for label, value in BAD_BUCKETS]
    variants.append(("unset, and every other variable wrong too", dict(EVERYTHING_WRONG, **{BUCKET_ENV: None})))
    _refuse_env(ctx, variants, code="CRAWLER_RESULTS_BUCKET_REQUIRED", args=args)


@check("config.session-before-bases", clauses=["CRAWLER-CONFIG-7", "CRAWLER-ARGV-2"], level="MUST",
       title="the session id is checked before the bases and every later variable",
       fakes="a healthy plane started with a non-canonical session id, and one later variable wrong (audience "
             "base, URL base, execution, metadata host, storage origin, policy, timeout; one per run), then all "
             "of them wrong at once",
       expected="CRAWLER_JOB_ARGUMENT_INVALID failed, exit 1, no request, in every variant")
def _(ctx):
    variants = [("bad session id and bad %s" % label, env) for label, env in WRONG_AFTER_SESSION]
    variants.append(("bad session id and every later variable wrong", EVERYTHING_WRONG))
    _refuse_env(ctx, variants, code="CRAWLER_JOB_ARGUMENT_INVALID", args=["--crawler-session-id", BAD_SESSION_ID])


@check("config.base-rules", clauses=["CRAWLER-CONFIG-2"], level="MUST",
       title="both bootstrap bases must be canonical https URLs (D2: no trailing dot segment; D3: port rules)",
       fakes="a healthy plane; one base (the URL base, then the audience base) is unset, empty, http, has a "
             "trailing '/', a query, a fragment, :443, :0443, an empty or zero-padded port, :0, :65536, userinfo, "
             "'%2F', '//', '/./', '/../', ends with '/..' or '/.', a backslash, no path, an uppercase host or "
             "more than 2048 characters (one variant per run)",
       expected="CRAWLER_BOOTSTRAP_CONFIGURATION_INVALID failed, exit 1, no request, in every variant")
def _(ctx):
    # The plane's URL base carries a port (the broker listens on port 0);
    # the audience base has none: between them both port forms are varied.
    def on(variable, transform):
        return lambda plane: {variable: transform(plane.env()[variable])}

    variants = [("URL base: " + label, on(URL_BASE_ENV, transform)) for label, transform in _base_variants()]
    variants += [("audience base: " + label, on(AUDIENCE_BASE_ENV, transform))
                 for label, transform in _base_variants()]
    _refuse_env(ctx, variants)


@check("config.execution", clauses=["CRAWLER-CONFIG-3"], level="MUST",
       title="CLOUD_RUN_EXECUTION must match the execution coordinate pattern",
       fakes="a healthy plane whose CLOUD_RUN_EXECUTION is unset, empty, uppercase, 64 characters, starts or ends "
             "with '-', holds '_', or ends with a newline (one per run)",
       expected="CRAWLER_BOOTSTRAP_CONFIGURATION_INVALID failed, exit 1, no request, in every variant")
def _(ctx):
    _refuse_env(ctx, [(label, {EXECUTION_ENV: value}) for label, value in BAD_EXECUTIONS])


@check("config.endpoints", clauses=["CRAWLER-CONFIG-4"], level="MUST",
       title="STORAGE_EMULATOR_HOST must be exactly http(s)://host[:port]; GCE_METADATA_HOST host[:port]",
       fakes="a healthy plane; STORAGE_EMULATOR_HOST is http:// on :80, http:// with a trailing '/', HTTP://, has a "
             "trailing '/', a path, a query, userinfo, no "
             "scheme, :443, :0443, an uppercase host or is empty; GCE_METADATA_HOST has a scheme, a space, a path, "
             "userinfo, an empty port, port 99999, or is empty (one per run)",
       expected="CRAWLER_BOOTSTRAP_CONFIGURATION_INVALID failed, exit 1, no request, in every variant")
def _(ctx):
    def storage(transform):
        def env(plane):
            origin = plane.env()[STORAGE_ENV]   # https://127.0.0.1:<port>
            return {STORAGE_ENV: transform(origin, urllib.parse.urlsplit(origin).port)}
        return env

    def metadata(transform):
        def env(plane):
            value = plane.env()[METADATA_HOST_ENV]   # 127.0.0.1:<port>
            return {METADATA_HOST_ENV: transform(value, value.rsplit(":", 1)[0])}
        return env

    variants = [("storage: " + label, storage(transform)) for label, transform in [
        ("http:// with port :80", lambda origin, port: "http://127.0.0.1:80"),
        ("http:// with a trailing '/'", lambda origin, port: "http://127.0.0.1:%d/" % port),
        ("uppercase HTTP scheme", lambda origin, port: "HTTP://127.0.0.1:%d" % port),
        ("trailing '/'", lambda origin, port: origin + "/"),
        ("a path", lambda origin, port: origin + "/bucket"),
        ("a query", lambda origin, port: origin + "?x"),
        ("userinfo", lambda origin, port: "https://user@127.0.0.1:%d" % port),
        ("no scheme", lambda origin, port: "127.0.0.1:%d" % port),
        ("port :443", lambda origin, port: "https://127.0.0.1:443"),
        ("port :0443", lambda origin, port: "https://127.0.0.1:0443"),
        ("uppercase host", lambda origin, port: "https://LOCALHOST:%d" % port),
        ("empty", lambda origin, port: ""),
    ]]
    variants += [("metadata: " + label, metadata(transform)) for label, transform in [
        ("http:// scheme", lambda value, host: "http://" + value),
        ("a space", lambda value, host: "a b"),
        ("a path", lambda value, host: value + "/computeMetadata"),
        ("userinfo", lambda value, host: "user@" + value),
        ("empty port", lambda value, host: host + ":"),
        ("port 99999", lambda value, host: host + ":99999"),
        ("empty", lambda value, host: ""),
    ]]
    _refuse_env(ctx, variants)


@check("config.storage-emulator-http", clauses=["CRAWLER-CONFIG-4"], level="MUST",
       title="a plain-HTTP STORAGE_EMULATOR_HOST (a stock emulator) is accepted, and said once on stderr (D19)",
       fakes="the store speaks plain HTTP, as the stock Cloud Storage emulators do; STORAGE_EMULATOR_HOST is "
             "http://127.0.0.1:<port> and the capability's upload URL is under it; everything else as usual "
             "(the broker and the source stay https)",
       expected="the run succeeds: the result is stored and verified, exit 0, stdout empty, and stderr is "
                "exactly one line, naming STORAGE_EMULATOR_HOST (not its value)")
def _(ctx):
    # Arrange
    plane = ctx.plane(store_plain_http=True)
    origin = plane.env()[STORAGE_ENV]
    # Act
    plane.run()
    # Assert
    result = plane.result
    lines = result.stderr.splitlines(True)
    ctx.expect(result.exit_code == 0 and not result.stdout and len(lines) == 1 and lines[0].endswith("\n")
               and STORAGE_ENV in lines[0] and origin not in lines[0],
               expected="exit 0, stdout empty, stderr one line naming %s and not its value" % STORAGE_ENV,
               actual=lambda: "exit %s, stdout %r, stderr %r; %s" % (
                   result.exit_code, result.stdout[:80], result.stderr[:300], plane.describe_exchanges()),
               diagnosis="a stock emulator speaks plain HTTP: accept http:// through STORAGE_EMULATOR_HOST only, "
                         "and say once that it is a development setting (CRAWLER-CONFIG-4, D19)")
    stored = plane.stored_result()
    ctx.expect(stored is not None, expected="the result stored through the plain-HTTP store",
               actual=lambda: "nothing stored (%s)" % plane.describe_exchanges(),
               diagnosis="with STORAGE_EMULATOR_HOST set, PUT the result to that plain-HTTP origin through the "
                         "capability's path and query")
    if stored is not None:
        problems = plane.verify_result(stored.raw)
        ctx.expect(not problems, expected="a stored result that restates what was fetched",
                   actual=lambda: "; ".join(problems[:4]),
                   diagnosis="a result stored through the emulator must still restate the fetch and be read off the "
                             "content, as over TLS")


@check("config.policy", clauses=["CRAWLER-CONFIG-5"], level="MUST",
       title="the egress policy must be a canonical policy document obeying every rule of its shape",
       fakes="a healthy plane whose MOSTLYRIGHT_CRAWLER_EGRESS_POLICY is set but empty, pretty-printed, ends with a "
             "newline, has an extra or a missing key, another schema, a bad port, a bad host name, a bad address, "
             "too many entries or max_redirects out of range (one per run)",
       expected="CRAWLER_BOOTSTRAP_CONFIGURATION_INVALID failed, exit 1, no request, in every variant")
def _(ctx):
    def canonical(doc):
        return docs.canonical(doc).decode("utf-8")

    # Each variant is a function of the plane's valid policy document (its
    # ports and addresses are the plane's own) to the variable's text.
    def with_field(key, value):
        return lambda good: canonical(dict(good, **{key: value}))

    def without(key):
        return lambda good: canonical(dict((k, v) for k, v in good.items() if k != key))

    def plus(key, entry):
        return lambda good: canonical(dict(good, **{key: good[key] + [entry]}))

    variants = [
        ("empty", lambda good: ""),
        ("pretty-printed", lambda good: json.dumps(good, indent=2, sort_keys=True)),
        ("keys unsorted", lambda good: json.dumps(dict(reversed(sorted(good.items()))), separators=(",", ":"))),
        ("trailing newline", lambda good: canonical(good) + "\n"),
        ("a JSON array", lambda good: "[" + canonical(good) + "]"),
        ("extra key", with_field("extra", 1)),
        ("missing allowed_addresses", without("allowed_addresses")),
        ("schema v2", with_field("schema_version", "mostlyright-egress-policy.v2")),
        ("port 0", plus("allowed_ports", 0)),
        ("port 65536", plus("allowed_ports", 65536)),
        ("port true", with_field("allowed_ports", [True])),
        ("port as a string", lambda good: canonical(dict(good, allowed_ports=[str(p) for p in good["allowed_ports"]]))),
        ("no ports", with_field("allowed_ports", [])),
        ("17 ports", with_field("allowed_ports", list(range(1000, 1017)))),
        ("IP literal in allowed_hosts", plus("allowed_hosts", "127.0.0.1")),
        ("uppercase host", plus("allowed_hosts", "Example.com")),
        ("host with a trailing dot", plus("allowed_hosts", "example.com.")),
        ("label starting with '-'", plus("allowed_hosts", "-bad.example")),
        ("label of 64 characters", plus("allowed_hosts", "a" * 64 + ".example")),
        ("last label all digits", plus("allowed_hosts", "example.123")),
        ("last label 0x-hex", plus("allowed_hosts", "example.0x1f")),
        ("no hosts", with_field("allowed_hosts", [])),
        ("65 hosts", with_field("allowed_hosts", ["h%d.example" % i for i in range(65)])),
        ("hosts not a list", with_field("allowed_hosts", "localhost")),
        ("address not an IP", plus("allowed_addresses", "localhost")),
        ("address with a zone", plus("allowed_addresses", "fe80::1%eth0")),
        ("IPv4 address with leading zeros", plus("allowed_addresses", "127.000.000.001")),
        ("IPv6 address not as ipaddress writes it", plus("allowed_addresses", "0:0:0:0:0:0:0:1")),
        ("17 addresses", with_field("allowed_addresses", ["10.0.0.%d" % i for i in range(17)])),
        ("max_redirects 11", with_field("max_redirects", 11)),
        ("max_redirects -1", with_field("max_redirects", -1)),
        ("max_redirects true", with_field("max_redirects", True)),
    ]
    _refuse_env(ctx, [(label, (lambda make: lambda plane: {POLICY_ENV: make(plane.policy)})(make))
                      for label, make in variants])


# What the upstream job's platform gives it (Cloud Run's own variables and the
# job's four), plus the harness's stand-ins for the platform's endpoints and
# trust: GCE_METADATA_HOST, STORAGE_EMULATOR_HOST and SSL_CERT_FILE.  No egress
# policy, no timeout, no TMPDIR: the upstream has no such inputs.
UPSTREAM_KEPT = frozenset((BUCKET_ENV, AUDIENCE_BASE_ENV, URL_BASE_ENV, EXECUTION_ENV, METADATA_HOST_ENV,
                           STORAGE_ENV, "SSL_CERT_FILE", "PATH", "LANG"))
CLOUD_RUN_JOB_ENV = {"CLOUD_RUN_JOB": "crawler", "CLOUD_RUN_TASK_INDEX": "0", "CLOUD_RUN_TASK_ATTEMPT": "0",
                     "CLOUD_RUN_TASK_COUNT": "1"}


@check("config.upstream-environment", clauses=["CRAWLER-CONFIG-5", "CRAWLER-FETCH-1"], level="MUST",
       title="started with the upstream job's environment only, the node runs under the network's policy (D18)",
       fakes="the node's environment is only what the upstream job gets (the bucket, the two bases, "
             "CLOUD_RUN_EXECUTION, Cloud Run's CLOUD_RUN_JOB/TASK_* variables, PATH, HOME) plus the harness's "
             "metadata host, storage origin and CA bundle: no MOSTLYRIGHT_CRAWLER_EGRESS_POLICY, no timeout, "
             "no TMPDIR; the request attests a policy the node never saw; its URL is https://localhost/ (port "
             "443, resolving to loopback), then the source site's own port",
       expected="configuration and bootstrap pass (one identity token, one :redeem, no :fail); then, as D18 "
                "says: localhost on 443 is CRAWLER_EGRESS_DENIED (a non-public address) and another port "
                "CRAWLER_SOURCE_URL_INVALID, each reported by bundle (exit 0) with no connection to the site "
                "or the tripwire")
def _(ctx):
    variants = [
        ("https://localhost/ (443, loopback)", ("https://localhost/data.csv", "CRAWLER_EGRESS_DENIED")),
        ("the site's port", ("https://localhost:{site}/data.csv", "CRAWLER_SOURCE_URL_INVALID")),
    ]

    def act(label, value):
        template, code = value
        # Arrange
        plane = ctx.plane()
        plane.broker.source_url = template.format(site=plane.site.port)
        full = plane.env()
        plane.drop_env.extend(name for name in full if name not in UPSTREAM_KEPT)
        plane.extra_env.update(CLOUD_RUN_JOB_ENV, HOME=ctx.tmpdir("home-%d" % len(ctx.planes)))
        # Act
        plane.run()
        # Assert
        redeems, fails = len(plane.broker.redeems()), len(plane.broker.fails())
        ctx.expect(redeems == 1 and fails == 0 and len(plane.metadata.requests()) >= 1,
                   expected="configuration accepted and the bootstrap redeemed once, no :fail (variant %s)" % label,
                   actual=lambda: "%d :redeem, %d :fail; %s" % (redeems, fails, describe_run(plane)),
                   diagnosis="without MOSTLYRIGHT_CRAWLER_EGRESS_POLICY the node must still start: the upstream "
                             "job has no such input, so its platform never sets it (CRAWLER-CONFIG-5, D18)")
        expect_reported(ctx, plane, code, variant=label)
        site, tripwire = len(plane.site.connections), len(plane.tripwire.connections)
        ctx.expect(site == 0 and tripwire == 0,
                   expected="no connection to the source site or the tripwire (variant %s)" % label,
                   actual="%d connection(s) to the site, %d to the tripwire" % (site, tripwire),
                   diagnosis="without a deployed policy the node still refuses a non-public address and any port "
                             "but 443 (D18): the network's rules cannot keep it from the metadata server")
    each_variant(ctx, variants, act)


@check("config.timeouts", clauses=["CRAWLER-CONFIG-6"], level="MUST",
       title="a timeout variable is decimal seconds, above 0 and at most its constant",
       fakes="a healthy plane with one timeout variable set wrong (0, -1, above its constant, 1e3, abc, empty, "
             "spaced, '5.', '.5', '+5', '1_0', nan, a non-ASCII digit; one per run); then runs with "
             "accepted values (2.5; each variable exactly at its constant)",
       expected="CRAWLER_BOOTSTRAP_CONFIGURATION_INVALID failed, exit 1, no request for the wrong values; "
                "the accepted values run to success")
def _(ctx):
    _refuse_env(ctx, [(label, {TIMEOUT_ENV % kind.upper(): value}) for label, kind, value in BAD_TIMEOUTS])

    def accepted(label, timeouts):
        # Arrange
        plane = ctx.plane(timeouts=timeouts)
        # Act
        plane.run()
        # Assert
        ctx.expect(plane.status_line() is None, expected="timeouts %s accepted (variant %s)" % (timeouts, label),
                   actual=lambda: "status line %s/%s" % plane.status_line(),
                   diagnosis="[0-9]+(.[0-9]+)? above 0 and at most the constant is a valid timeout")
        expect_success(ctx, plane)
        return plane

    run_variants(ctx, GOOD_TIMEOUTS, accepted)


@check("config.no-proxy", clauses=["CRAWLER-CONFIG-8"], level="MUST",
       title="proxy variables are ignored on every connection",
       fakes="a healthy plane; HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and their lowercase forms point at the "
             "tripwire; NO_PROXY names an unrelated host",
       expected="the run succeeds; the tripwire sees no connection")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    proxy = plane.tripwire.url("/", scheme="http")
    _set_env(plane, dict((name, proxy) for name in PROXY_VARIABLES))
    _set_env(plane, {"NO_PROXY": "unrelated.conformance.test", "no_proxy": "unrelated.conformance.test"})
    # Act
    plane.run()
    # Assert
    connections = len(plane.tripwire.connections)
    ctx.expect(connections == 0, expected="no connection to the proxy (the tripwire)",
               actual="%d connection(s) to it" % connections,
               diagnosis="the node honoured a proxy variable: every connection goes direct (CRAWLER-CONFIG-8)")
    expect_success(ctx, plane)


@check("config.no-credentials", clauses=["CRAWLER-CONFIG-8"], level="MUST",
       title="ambient credential files are never read",
       fakes="a healthy plane; GOOGLE_APPLICATION_CREDENTIALS, CLOUDSDK_CONFIG/application_default_credentials.json "
             "and HOME/.config/gcloud/application_default_credentials.json are named pipes the harness watches",
       expected="the run succeeds; no pipe is ever opened for reading")
def _(ctx):
    # Arrange: a FIFO opened for reading has a reader, which a non-blocking
    # open for writing detects (ENXIO otherwise); a node that opens one blocks
    # until the harness's probe opens it, then reads end of file.
    home = ctx.tmpdir("home")
    sdk = ctx.tmpdir("cloudsdk")
    gcloud = os.path.join(home, ".config", "gcloud")
    os.makedirs(gcloud)
    pipes = {
        "GOOGLE_APPLICATION_CREDENTIALS": os.path.join(ctx.tmp, "credentials.json"),
        "CLOUDSDK_CONFIG/" + ADC_FILE: os.path.join(sdk, ADC_FILE),
        "HOME/.config/gcloud/" + ADC_FILE: os.path.join(gcloud, ADC_FILE),
    }
    for path in pipes.values():
        os.mkfifo(path, 0o600)
    plane = ctx.plane(extra_env={"GOOGLE_APPLICATION_CREDENTIALS": pipes["GOOGLE_APPLICATION_CREDENTIALS"],
                                 "CLOUDSDK_CONFIG": sdk, "HOME": home})
    # Act
    opened = []
    proc = plane.start()
    deadline = Deadline(CRAWLER_RUN_TIMEOUT_S)
    while True:
        running = proc.running() and not deadline.over()
        for name, path in sorted(pipes.items()):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                continue  # ENXIO: nobody has it open for reading
            os.close(fd)
            if name not in opened:
                opened.append(name)
                ctx.note("the node opened %s" % name)
        if not running:
            break
        time.sleep(POLL_INTERVAL_S)
    if proc.running():
        node_hung()  # the run outlived its timeout: it is ended below
    plane.wait(timeout=0)
    # Assert
    ctx.expect(not opened, expected="no credential file opened",
               actual="the node opened %s" % ", ".join(opened),
               diagnosis="authority is the identity token and the capability; credential files are never read "
                         "(CRAWLER-CONFIG-8)")
    expect_success(ctx, plane)
