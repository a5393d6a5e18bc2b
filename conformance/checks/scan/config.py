"""Configuration: the server origin, the trees, the worker's own waits and the absence of proxies
(SCAN-CONFIG-1 to SCAN-CONFIG-5).

Everything is read and checked once, before the first file and the first request, so a mistake in
a unit file is a usage error at start rather than a worker that half runs. The origin is HTTPS and
nothing else (a path or a user in it would send the token somewhere else); the trees are where the
XDG variables say, never relative to a working directory that changes; and no proxy ever sees a
request, since a proxy would see every bearer token and pre-signed URL.
"""

import os

from conformance.checks import check
from conformance.checks.scan._common import (CANARY, describe_run, each_variant, expect_usage,
                                             run_to_exit, stdout_lines)

# SCAN-CONFIG-2: --server values that are not an https origin (label, plane -> value).
BAD_ORIGINS = [
    ("plain http", lambda p: "http" + p.server.origin[5:]),
    ("a user", lambda p: p.server.origin.replace("https://", "https://%s@" % CANARY)),
    ("a path", lambda p: p.server.origin + "/" + CANARY),
    ("a query", lambda p: p.server.origin + "?" + CANARY),
    ("a fragment", lambda p: p.server.origin + "#" + CANARY),
    ("port 0", lambda p: "https://127.0.0.1:0"),
]

# SCAN-CONFIG-4: option values outside the ranges of *Time in checks*, or not decimal numbers.
BAD_WAITS = [
    ("--poll-seconds", "0.05"), ("--poll-seconds", "3601"), ("--poll-seconds", CANARY),
    ("--poll-seconds", "1e1"), ("--poll-seconds", "nan"),
    ("--error-delay-seconds", "0"), ("--error-delay-seconds", "-1"),
    ("--http-timeout", "0.5"), ("--http-timeout", "3601"),
    ("--drain-seconds", "0.5"), ("--drain-seconds", "86401"),
]
# SCAN-CONFIG-4: the lowest value of each range, which must start.
LOWEST_WAITS = dict(poll_s="0.1", error_delay_s="0.1", http_timeout_s="1", drain_s="1")
OPTION_OF = {"--poll-seconds": "poll_s", "--error-delay-seconds": "error_delay_s", "--http-timeout": "http_timeout_s",
             "--drain-seconds": "drain_s"}
# SCAN-CONFIG-3: a relative path the usage line must not repeat.
RELATIVE = CANARY + "/relative"


@check("config.origin", clauses=["SCAN-CONFIG-2", "SCAN-CONFIG-1"], level="MUST",
       title="--server must be an https origin: http, a user, a path, a query or a fragment is a usage error",
       fakes="a healthy plane; --server is its origin spoiled one way per run (plain http, a user, a path, a "
             "query, a fragment, port 0); then the origin with one trailing slash",
       expected="each spoiled origin: exit 64, one line naming --server, no connection to the server, nothing "
                "in the trees; the trailing slash: the worker starts and claims")
def _(ctx):
    def act(label, spoil):
        plane = ctx.plane()
        result = run_to_exit(plane, server=spoil(plane))
        expect_usage(ctx, plane, result, "--server with %s" % label, ["--server"])

    each_variant(ctx, BAD_ORIGINS, act)
    # Arrange
    plane = ctx.plane()
    # Act
    plane.start(server=plane.server.origin + "/")
    plane.wait_ready()
    plane.wait_claims(1)
    plane.stop()
    # Assert
    ctx.expect(all(call.auth == "ok" for call in plane.server.calls()),
               expected="the origin with one trailing slash is accepted and used",
               actual=describe_run(plane),
               diagnosis="accept the server origin with one trailing slash and join the API paths to it without a "
                         "double slash")


@check("config.trees", clauses=["SCAN-CONFIG-3", "SCAN-CONFIG-1"], level="MUST",
       title="the trees live under XDG_STATE_HOME and XDG_DATA_HOME (else HOME); a relative path is refused",
       fakes="XDG_STATE_HOME relative; XDG_DATA_HOME relative; both unset with HOME relative; then a normal start; "
             "then both unset with HOME absolute",
       expected="each relative case: exit 64, one line naming the variable and not its value, nothing written; a "
                "normal start: the state tree, bundles/{tmp,ready,quarantine} and work/abandoned under the XDG "
                "directories; unset: the same under HOME/.local/state and HOME/.local/share")
def _(ctx):
    variants = [
        ("XDG_STATE_HOME relative", ({"XDG_STATE_HOME": RELATIVE}, (), ["XDG_STATE_HOME"])),
        ("XDG_DATA_HOME relative", ({"XDG_DATA_HOME": RELATIVE}, (), ["XDG_DATA_HOME"])),
        ("both unset, HOME relative", ({"HOME": RELATIVE}, ("XDG_STATE_HOME", "XDG_DATA_HOME"),
                                       ["XDG_STATE_HOME", "XDG_DATA_HOME", "HOME"])),
    ]

    def act(label, variant):
        env, drop, names = variant
        plane = ctx.plane(drop_env=drop)
        result = run_to_exit(plane, env=env)
        expect_usage(ctx, plane, result, label, names, hidden=(RELATIVE,))

    each_variant(ctx, variants, act)
    # Arrange
    plane = ctx.plane()
    # Act
    plane.start()
    plane.wait_ready()
    plane.wait_claims(1)
    plane.stop()
    # Assert
    wanted = [os.path.join(plane.state_dir, "remote-worker.lock")] + [
        os.path.join(plane.bundle_dir, sub) for sub in ("tmp", "ready", "quarantine")] + [
        os.path.join(plane.work_dir, "abandoned")]
    missing = [path for path in wanted if not os.path.exists(path)]
    ctx.expect(not missing,
               expected="the state tree at $XDG_STATE_HOME/truf/remote-worker and the bundle and work trees at "
                        "$XDG_DATA_HOME/truf/remote-worker/{bundles,work}",
               actual="missing %s" % ", ".join(missing[:4]),
               diagnosis="build the trees from the XDG variables exactly as SCAN-CONFIG-3 lays them out")
    # Arrange: both unset, HOME absolute
    plane = ctx.plane(drop_env=("XDG_STATE_HOME", "XDG_DATA_HOME"))
    # Act
    plane.start()
    plane.wait_ready()
    plane.wait_claims(1)
    plane.stop()
    # Assert
    base = plane.home_dir
    wanted = [os.path.join(base, ".local", "state", "truf", "remote-worker", "remote-worker.lock"),
              os.path.join(base, ".local", "share", "truf", "remote-worker", "bundles", "ready"),
              os.path.join(base, ".local", "share", "truf", "remote-worker", "work")]
    missing = [path for path in wanted if not os.path.exists(path)]
    ctx.expect(not missing,
               expected="with the XDG variables unset, the trees under HOME/.local/state and HOME/.local/share",
               actual="missing %s" % ", ".join(missing[:3]),
               diagnosis="unset XDG variables default to $HOME/.local/state and $HOME/.local/share")


@check("config.waits", clauses=["SCAN-CONFIG-4", "SCAN-CONFIG-1"], level="MUST",
       title="the wait options are decimal numbers within their ranges; the lowest values start",
       fakes="a healthy plane; one wait option out of range or not a decimal number per run; then every wait at "
             "the lowest value of its range",
       expected="each bad value: exit 64, one line naming the option and not the value, no request; the lowest "
                "values: the worker starts and claims")
def _(ctx):
    def act(label, pair):
        option, value = pair
        plane = ctx.plane()
        result = run_to_exit(plane, **{OPTION_OF[option]: value})
        expect_usage(ctx, plane, result, label, [option], hidden=(CANARY,) if value == CANARY else ())

    each_variant(ctx, [("%s %s" % pair, pair) for pair in BAD_WAITS], act)
    # Arrange
    plane = ctx.plane()
    # Act
    plane.start(**LOWEST_WAITS)
    plane.wait_ready()
    plane.wait_claims(1)
    result = plane.stop()
    # Assert
    ctx.expect(result.exit_code != 64 and any(line.startswith("worker: started with") for line in stdout_lines(result)),
               expected="--poll-seconds 0.1 --error-delay-seconds 0.1 --http-timeout 1 --drain-seconds 1 start",
               actual="exit %s, stdout %r" % (result.exit_code, stdout_lines(result)[:3]),
               diagnosis="the lowest value of each range is accepted")


@check("config.no-proxy", clauses=["SCAN-CONFIG-5"], level="MUST",
       title="no request of the worker or a runner goes through a proxy, whatever the proxy variables say",
       fakes="every proxy variable (HTTPS_PROXY, https_proxy, HTTP_PROXY, http_proxy, ALL_PROXY, all_proxy) names "
             "the plane's tripwire, NO_PROXY another host; one assignment with one target",
       expected="claims, a status read, progress events, the runner's target GET and the upload all reach the "
                "fakes directly; the tripwire sees no connection")
def _(ctx):
    # Arrange
    plane = ctx.plane(proxies=True)
    res = plane.add_assignment()
    # Act
    plane.start()
    plane.wait_resolved(res)
    plane.wait_for(lambda: plane.server.progress_events(), "a progress event")
    plane.stop()
    # Assert
    verbs = set(call.verb for call in plane.server.calls() if call.auth == "ok")
    fetched = [e for e in plane.store.server.transcript if e.method == "GET"]
    ctx.expect({"claim", "status", "progress", "bundle"} <= verbs and fetched,
               expected="every kind of request (claim, status, progress, upload, the target GET) made directly",
               actual="verbs seen: %s; target GETs: %d (%s)" % (sorted(verbs), len(fetched), describe_run(plane)),
               diagnosis="the run must make every kind of request for the tripwire to mean something")
    ctx.expect(not plane.tripwire.connections,
               expected="no connection to the tripwire every proxy variable names",
               actual="%d connection(s)" % len(plane.tripwire.connections),
               diagnosis="connect to the origin itself; never read the proxy variables")
