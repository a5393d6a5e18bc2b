"""Configuration: every variable read once and checked before any request; nothing clamped.

SESSION-CONFIG-1 reads the whole table once, after the command line and before any request,
and ends a run whose variable breaks its rule with `SESSION_WORKER_CONFIG_INVALID: <detail>`,
exit 1, naming the variable and never its value. SESSION-CONFIG-2 holds the numbers (PORT, the
warm pool, the grace, the two ceilings) to their forms and ranges: these are how a deployment,
and the harness, shortens the node's own ceilings, so a clamped or NaN value would silently
change a bound. SESSION-CONFIG-3 and -4 hold the origin, the audiences, the bucket, the
attestation and the two endpoint overrides to their forms; SESSION-CONFIG-5 forbids proxies
and ambient credentials: the node's only authority is the identity token and the capability.

Every refused configuration leaves every fake untouched (expect_no_request); the accepted
variants run a short session to its close.
"""

import os

from conformance.checks import check
from conformance.checks.session._common import (
    describe_run, each_variant, expect_code_line, expect_no_request, expect_report, expect_summary, run_to_exit,
    stderr_of)

CONFIG_INVALID = "SESSION_WORKER_CONFIG_INVALID"
ORIGIN = "STUDIO_API_ORIGIN"
PORT = "PORT"
GRACE = "MR_SESSION_WORKER_SHUTDOWN_GRACE_SECONDS"
POOL = "MR_SESSION_WORKER_WARM_POOL_SIZE"
PROBE = "MR_SESSION_WORKER_PROBE_TIMEOUT_SECONDS"
ACQUISITION = "MR_SESSION_WORKER_ACQUISITION_TIMEOUT_SECONDS"
LEASE_AUDIENCE = "MR_SESSION_WORKER_LEASE_AUDIENCE"
BOOTSTRAP_AUDIENCE = "STUDIO_WORKER_BOOTSTRAP_AUDIENCE"
ATTESTATION = "MOSTLYRIGHT_EXTERNAL_NETWORK_POLICY_ATTESTATION"
BUCKET = "MOSTLYRIGHT_CRAWLER_RESULTS_BUCKET"
METADATA_HOST = "GCE_METADATA_HOST"
STORAGE = "STORAGE_EMULATOR_HOST"
CREDENTIALS = "GOOGLE_APPLICATION_CREDENTIALS"
# The access time given to the credentials file: a read moves it (relatime updates an atime older
# than the mtime), so an unchanged one proves the file was never read.
UNREAD_ATIME = 1
# A value no detail may repeat: distinctive, so a hit can only be an echo of the environment.
CANARY = "CANARYCFG7e21"

# SESSION-CONFIG-2: (label, variable, value) a node refuses; nothing is clamped.
BAD_NUMBERS = [
    ("probe timeout 0", PROBE, "0"),
    ("probe timeout 301", PROBE, "301"),
    ("probe timeout nan", PROBE, "nan"),
    ("probe timeout inf", PROBE, "inf"),
    ("probe timeout -5", PROBE, "-5"),
    ("probe timeout as text", PROBE, CANARY),
    ("acquisition timeout 601", ACQUISITION, "601"),
    ("shutdown grace 600.5", GRACE, "600.5"),
    ("warm pool 9", POOL, "9"),
    ("warm pool 1.0", POOL, "1.0"),
    ("warm pool as text", POOL, "two"),
    ("PORT 65536", PORT, "65536"),
]

# SESSION-CONFIG-3: (label, variable, value or None for unset) a node refuses. Values are built
# from the plane's origin (https://127.0.0.1:<port>) by the function.
BAD_NAMES = [
    ("origin unset", ORIGIN, lambda origin: None),
    ("origin over plain HTTP", ORIGIN, lambda origin: "http" + origin[5:]),
    ("origin with a path", ORIGIN, lambda origin: origin + "/v3"),
    ("origin with a query", ORIGIN, lambda origin: origin + "?" + CANARY),
    ("origin not a URL", ORIGIN, lambda origin: CANARY),
    ("lease audience over plain HTTP (Job mode too)", LEASE_AUDIENCE, lambda origin: "http" + origin[5:]),
    ("bootstrap audience not a URL", BOOTSTRAP_AUDIENCE, lambda origin: CANARY),
    ("bucket in upper case", BUCKET, lambda origin: "Results-" + CANARY),
    ("bucket of two characters", BUCKET, lambda origin: "ab"),
]

# SESSION-CONFIG-4: malformed endpoint overrides (label, variable, value).
BAD_ENDPOINTS = [
    ("metadata host with a scheme", METADATA_HOST, "http://127.0.0.1:8080"),
    ("metadata host with a path", METADATA_HOST, "127.0.0.1:8080/computeMetadata"),
    ("metadata host with port 65536", METADATA_HOST, "127.0.0.1:65536"),
    ("storage origin without a scheme", STORAGE, "127.0.0.1:8443"),
    ("storage origin over ftp", STORAGE, "ftp://127.0.0.1:8443"),
    ("storage origin over http on :80", STORAGE, "http://127.0.0.1:80"),
    ("storage origin with a path", STORAGE, "https://127.0.0.1:8443/storage"),
]


def _refused(ctx, plane, name, value, label):
    """The run was refused as SESSION_WORKER_CONFIG_INVALID naming `name`, before any request."""
    hidden = [value] if value and not value.strip().lstrip("+-").replace(".", "").isdigit() else []
    detail = expect_code_line(ctx, plane.result, CONFIG_INVALID, 1, label, hidden=hidden)
    ctx.expect(name in detail, expected="a detail naming %s (variant %s)" % (name, label),
               actual="detail %r" % detail,
               diagnosis="the detail names the variable that broke its rule, so an operator can fix it")
    expect_no_request(ctx, plane, label)
    return detail


@check("config.numbers", clauses=["SESSION-CONFIG-1", "SESSION-CONFIG-2"], level="MUST",
       title="a number out of its form or range is refused before any request; nothing is clamped",
       fakes="a healthy plane; one variable wrong per run: the probe timeout 0, 301, nan, inf, -5 or text; the "
             "acquisition timeout 601; the grace 600.5; the warm pool 9, 1.0 or text; PORT 65536; then every number "
             "set but empty, and a fractional probe timeout",
       expected="exit 1, a stderr line `SESSION_WORKER_CONFIG_INVALID: <detail>` naming the variable and not its "
                "value, no request; the empty and fractional values run a session to its close")
def _(ctx):
    def act(label, value):
        name, text = value
        plane = ctx.plane()
        plane.close_session()  # a node that wrongly goes on ends at its first claim
        plane.run(env={name: text})
        _refused(ctx, plane, name, text, label)

    each_variant(ctx, [(label, (name, text)) for label, name, text in BAD_NUMBERS], act)
    # SESSION-CONFIG-1: set but empty counts as unset (the defaults), and a decimal may have a fraction.
    ctx.note("variant: empty numbers and a fractional probe timeout (accepted)")
    plane = ctx.plane()
    plane.start(env={PORT: "", GRACE: "", ACQUISITION: "", POOL: "0", PROBE: "7.5"})
    plane.wait_claims(1)
    plane.close_session()
    plane.wait()
    expect_summary(ctx, plane, terminal_state="closed", variant="empty numbers and a fractional probe timeout")


@check("config.names", clauses=["SESSION-CONFIG-1", "SESSION-CONFIG-3"], level="MUST",
       title="the origin, the audiences and the bucket are held to their forms",
       fakes="a healthy plane; one variable wrong per run: STUDIO_API_ORIGIN unset, over http, with a path, a "
             "query, not a URL; a lease audience over http or not a URL (Job mode validates them too); a bucket "
             "in upper case or of two characters; then the "
             "origin with one trailing '/', a valid lease audience and attestation",
       expected="exit 1, `SESSION_WORKER_CONFIG_INVALID: <detail>` naming the variable (and saying an unset "
                "origin is required), not its value; no request; the valid values run a session to its close")
def _(ctx):
    def act(label, value):
        name, build = value
        plane = ctx.plane()
        text = build(plane.control.origin)
        if text is None:
            plane.close_session()  # a node that wrongly goes on ends at its first claim
            plane.run(drop_env=[name])
        else:
            plane.close_session()  # a node that wrongly goes on ends at its first claim
            plane.run(env={name: text})
        detail = _refused(ctx, plane, name, text, label)
        if text is None:
            ctx.expect("required" in detail.lower(), expected="a detail saying %s is required" % name,
                       actual="detail %r" % detail,
                       diagnosis="an unset origin is named as required, not as malformed")

    each_variant(ctx, [(label, (name, build)) for label, name, build in BAD_NAMES], act)
    ctx.note("variant: origin with one trailing '/', valid audience and attestation (accepted)")
    plane = ctx.plane()
    origin = plane.control.origin
    plane.start(env={ORIGIN: origin + "/", LEASE_AUDIENCE: origin + "/lease-audience",
                     ATTESTATION: "conformance-attestation-1"})
    plane.wait_claims(1)
    plane.close_session()
    plane.wait()
    expect_summary(ctx, plane, terminal_state="closed", variant="valid names")


@check("config.endpoints", clauses=["SESSION-CONFIG-4", "SESSION-CONFIG-1"], level="MUST",
       title="a malformed metadata host or storage origin is refused; a plain-HTTP emulator is said once",
       fakes="a healthy plane; GCE_METADATA_HOST with a scheme, a path or port 65536, or STORAGE_EMULATOR_HOST "
             "without a scheme, over ftp, http on :80 or with a path (one per run); then a store that speaks "
             "plain HTTP (a stock emulator) and one probe of a source it holds",
       expected="exit 1 and SESSION_WORKER_CONFIG_INVALID naming the variable, no request; with the plain-HTTP "
                "store the probe is answered and stderr has one line naming STORAGE_EMULATOR_HOST (not its value) "
                "as a development setting")
def _(ctx):
    def act(label, value):
        name, text = value
        plane = ctx.plane()
        plane.close_session()  # a node that wrongly goes on ends at its first claim
        plane.run(env={name: text})
        _refused(ctx, plane, name, text, label)

    each_variant(ctx, [(label, (name, text)) for label, name, text in BAD_ENDPOINTS], act)
    ctx.note("variant: a plain-HTTP storage emulator (accepted, said on stderr)")
    plane = ctx.plane(store_plain_http=True)
    source = plane.add_source(columns=["city", "temp"], rows=[["Oslo", 3], ["Lima", 19]])
    probe_id = plane.probe("sample_rows", source, limit=5)
    run_to_exit(plane, [probe_id])
    expect_report(ctx, plane, probe_id, "succeeded", what="a probe read through the plain-HTTP store")
    expect_summary(ctx, plane, terminal_state="closed", variant="plain-HTTP store")
    value = plane.store.origin
    said = [line for line in stderr_of(plane.result) if STORAGE in line]
    ctx.expect(len(said) == 1 and "development" in said[0].lower() and value not in said[0],
               expected="one stderr line naming %s as a development setting, without its value" % STORAGE,
               actual=lambda: "stderr %r" % stderr_of(plane.result)[-4:],
               diagnosis="a plain-HTTP store is a development setting: the node says so once, so it is never "
                         "mistaken for production")


@check("config.no-proxy", clauses=["SESSION-CONFIG-5"], level="MUST",
       title="every connection goes direct whatever the proxy variables say; no credential file is read",
       fakes="every proxy variable (upper and lower case, NO_PROXY naming another host) names the tripwire; "
             "GOOGLE_APPLICATION_CREDENTIALS names a key file; one probe of a source, then the session closes",
       expected="the probe answered and the session closed; no connection to the tripwire; the key file never "
                "read (its access time unchanged)")
def _(ctx):
    # Arrange: a key file whose access time a read would move (atime older than mtime: relatime updates it)
    key_file = os.path.join(ctx.tmpdir("credentials"), "service-account.json")
    with open(key_file, "w") as handle:
        handle.write('{"type": "service_account", "private_key": "%s"}\n' % CANARY)
    os.utime(key_file, (UNREAD_ATIME, os.stat(key_file).st_mtime))
    plane = ctx.plane()
    source = plane.add_source(columns=["city", "temp"], rows=[["Oslo", 3], ["Lima", 19]])
    probe_id = plane.probe("sample_rows", source, limit=5)
    # Act
    run_to_exit(plane, [probe_id], env={"NO_PROXY": "other.invalid", "no_proxy": "other.invalid",
                                        CREDENTIALS: key_file})
    # Assert
    expect_report(ctx, plane, probe_id, "succeeded", what="a probe with every proxy variable set")
    expect_summary(ctx, plane, terminal_state="closed")
    ctx.expect(not plane.tripwire.connections, expected="no connection to the proxy the variables name",
               actual=lambda: "%d connection(s) to it (%s)" % (len(plane.tripwire.connections), describe_run(plane)),
               diagnosis="no URL of this contract is reached through a proxy: connect directly")
    ctx.expect(os.stat(key_file).st_atime == UNREAD_ATIME,
               expected="the credentials file named by %s never read" % CREDENTIALS,
               actual="its access time moved: something read it",
               diagnosis="the node's authority is the identity token and the capability; it reads no ambient "
                         "credential")
