"""Proxies: HTTPS_PROXY / HTTP_PROXY / NO_PROXY, the CONNECT tunnel, forwarding.

Every check puts the node behind the harness's proxy (conformance/proxy.py;
the plane's `proxy=True`) and judges it by what the proxy and the store saw:
which requests came through the proxy, in which form, with which
credentials, and which went straight to the store. Nothing here depends on
what the node's work publishes or how it names it.
"""

import signal
import socket
import time

from conformance.checks import check
from conformance.checks.step._common import (
    KEY_PREFIX, SLOW_STOP_IN_CONNECT, Match, csv_inputs, expect_diagnostics, expect_exit, expect_marker,
    expect_no_marker, expect_prompt_stop, faults, stderr_lines)

# The connect deadline (STEP-STOP-3) and how long after it the node may
# exit on a loaded machine; how long the harness waits for such a run.
CONNECT_DEADLINE_S = 10.0
DEADLINE_SLACK_S = 4.0
DEADLINE_RUN_TIMEOUT_S = 40.0

# How long a node may take to exit after the signal before the harness kills
# it: the budget is 1 s, so waiting longer only delays the verdict.
AFTER_STOP_TIMEOUT_S = 10.0
# Time given to the node to block on the proxy after the proxy saw its CONNECT.
SETTLE_S = 0.5
# How long to wait for the node to reach the proxy.
REACH_TIMEOUT_S = 30.0

# A name no resolver knows (RFC 6761 reserves .test), under a parent domain
# the NO_PROXY checks name: a node that bypasses the proxy for it cannot reach
# it, one that wrongly uses the proxy is served (the proxy maps the name).
UNRESOLVABLE_PARENT = "conformance.test"
UNRESOLVABLE_HOST = "input." + UNRESOLVABLE_PARENT


def _dead_proxy_url():
    """http://127.0.0.1:PORT where nothing listens: every connect is refused."""
    probe = socket.socket()
    try:
        probe.bind(("127.0.0.1", 0))
        return "http://127.0.0.1:%d" % probe.getsockname()[1]
    finally:
        probe.close()


def _store_authority(plane, host="127.0.0.1"):
    return "%s:%d" % (host, plane.store.server.port)


def _store_connections(plane):
    return len(plane.store.connections)


def _expect_success(ctx, plane, why):
    expect_exit(ctx, plane, 0, why)
    expect_marker(ctx, plane, "succeeded", 0)


def _expect_tunnelled(ctx, plane, host="127.0.0.1"):
    """Every connection the store accepted came through a CONNECT tunnel for
    the store's host:port; a Host header, when one came, names the same.

    No Host is no fault: CPython's http.client sends none on CONNECT up to
    3.11 (HTTP/1.0, as urllib tunnels) and one from 3.12 on, and proxies
    route a tunnel by its request target, so a node that tunnels through
    urllib must not fail here for it."""
    authority = _store_authority(plane, host)
    requests = plane.proxy.requests
    wrong = [r for r in requests
             if r.method != "CONNECT" or r.target != authority or r.host_header not in (None, authority)]
    ctx.expect(requests and not wrong,
               expected="only `CONNECT %s` at the proxy, any `Host` naming `%s`" % (authority, authority),
               actual="the proxy saw: %s" % (
                   "; ".join("%s %s (Host %r)" % (r.method, r.target, r.host_header) for r in (wrong or requests)[:4])
                   or "nothing"),
               diagnosis="an https URL goes through the proxy as a CONNECT tunnel to the URL's host:port, "
                         "and a Host header, if sent, names the same (STEP-PROXY-3)")
    tunnels, accepted = len(plane.proxy.tunnels()), _store_connections(plane)
    ctx.expect(accepted and tunnels >= accepted,
               expected="every connection the store accepted came through a tunnel",
               actual="%d connection(s) at the store, %d tunnel(s) opened by the proxy" % (accepted, tunnels),
               diagnosis="a node behind a proxy uses it for every request NO_PROXY does not exempt (STEP-PROXY-1)")


def _expect_forwarded(ctx, plane, host="127.0.0.1"):
    """Every connection the store accepted carried a request the proxy
    forwarded from absolute form, with the origin's Host."""
    authority = _store_authority(plane, host)
    requests = plane.proxy.requests
    wrong = [r for r in requests
             if not (r.absolute and r.key.startswith("http://%s/" % authority) and r.host_header == authority)]
    ctx.expect(requests and not wrong,
               expected="absolute-form targets http://%s/... with `Host: %s` at the proxy" % (authority, authority),
               actual="the proxy saw: %s" % (
                   "; ".join("%s %s (Host %r)" % (r.method, r.target, r.host_header) for r in (wrong or requests)[:4])
                   or "nothing"),
               diagnosis="an http URL goes to the proxy with the whole URL as request target and the origin's "
                         "Host (STEP-PROXY-4)")
    forwarded, accepted = len(plane.proxy.forwarded()), _store_connections(plane)
    ctx.expect(accepted and forwarded >= accepted,
               expected="every connection the store accepted came from the proxy",
               actual="%d connection(s) at the store, %d request(s) forwarded by the proxy" % (accepted, forwarded),
               diagnosis="a node behind a proxy uses it for every request NO_PROXY does not exempt (STEP-PROXY-1)")


def _expect_unproxied(ctx, plane, why):
    """The proxy saw no request, and the store served the run."""
    seen = plane.proxy.requests
    ctx.expect(not seen, expected="no request at the proxy (%s)" % why,
               actual="the proxy saw: %s" % plane.proxy.describe(),
               diagnosis="connect directly to a host the variables exempt from the proxy (STEP-PROXY-1, -2)")
    ctx.expect(_store_connections(plane) > 0, expected="the store served the run directly",
               actual="no connection at the store",
               diagnosis="a host the variables exempt still gets its requests: connect directly to the store")


def _variant(ctx, text):
    ctx.note("variant: " + text)


@check("proxy.tunnel", clauses=["STEP-PROXY-3", "STEP-PROXY-1"], level="MUST",
       title="behind a proxy, every https request goes through a CONNECT tunnel, TLS verified end to end",
       fakes="HTTPS store (test CA); HTTPS_PROXY and https_proxy name the harness's proxy, which tunnels CONNECT",
       expected="exit 0, succeeded marker; at the proxy only `CONNECT host:port` (a Host, if any, naming the same), "
                "one tunnel per connection the store accepted")
def _(ctx):
    # Arrange
    plane = ctx.step_plane(inputs=csv_inputs(2), tls=True, proxy=True)
    # Act
    plane.run()
    # Assert
    _expect_success(ctx, plane, "a proxy that tunnels is a working network")
    _expect_tunnelled(ctx, plane)


@check("proxy.forward", clauses=["STEP-PROXY-4", "STEP-PROXY-1"], level="MUST",
       title="behind a proxy, every http request goes to it in absolute form with the origin's Host",
       fakes="HTTP store; HTTP_PROXY and http_proxy name the harness's proxy, which forwards absolute-form "
             "requests (and answers 400 to any other form)",
       expected="exit 0, succeeded marker; at the proxy only `http://host:port/...` targets with `Host: host:port`, "
                "one per connection the store accepted")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(2), proxy=True)
    plane.run()
    _expect_success(ctx, plane, "a proxy that forwards is a working network")
    _expect_forwarded(ctx, plane)


@check("proxy.variables", clauses=["STEP-PROXY-1"], level="MUST",
       title="the proxy variables are read as urllib reads them: lowercase wins, HTTP_PROXY not under CGI, "
             "each scheme its own",
       fakes="four runs: HTTPS_PROXY names a dead address and https_proxy the proxy; HTTP_PROXY names the proxy "
             "with REQUEST_METHOD set; HTTP_PROXY names the proxy and http_proxy is empty; only HTTPS_PROXY is set "
             "while the store is plain HTTP",
       expected="every run succeeds; the first goes through the proxy, the other three never touch it")
def _(ctx):
    _variant(ctx, "HTTPS_PROXY a dead address, https_proxy the proxy: the lowercase one wins")
    plane = ctx.step_plane(inputs=csv_inputs(1), tls=True, proxy=True, proxy_env=("https_proxy",),
                           extra_env={"HTTPS_PROXY": _dead_proxy_url()})
    plane.run()
    _expect_success(ctx, plane, "https_proxy wins over HTTPS_PROXY")
    _expect_tunnelled(ctx, plane)

    for why, env_names, extra in (
            ("REQUEST_METHOD is set: HTTP_PROXY may come from a client's Proxy: header (CGI)",
             ("HTTP_PROXY",), {"REQUEST_METHOD": "GET"}),
            ("http_proxy is set and empty: no proxy for http, whatever HTTP_PROXY says",
             ("HTTP_PROXY",), {"http_proxy": ""}),
            ("only HTTPS_PROXY is set: it is not for http URLs",
             ("HTTPS_PROXY", "https_proxy"), {})):
        _variant(ctx, why)
        plane = ctx.step_plane(inputs=csv_inputs(1), proxy=True, proxy_env=env_names, extra_env=extra)
        plane.run()
        _expect_success(ctx, plane, why)
        _expect_unproxied(ctx, plane, why)


@check("proxy.bad-variable", clauses=["STEP-PROXY-1", "STEP-PROXY-5"], level="MUST",
       title="a proxy variable that is not an http:// URL fails the run at start-up, naming it, never quoting it",
       fakes="two runs: https_proxy is a socks5:// URL with a password; an https:// URL with a password (urllib "
             "sent its CONNECT in the clear to such a port, credentials included: D40)",
       expected="exit 10, no marker, no request at the store; stderr names https_proxy; the password nowhere")
def _(ctx):
    for template in ("socks5://canary:%s@127.0.0.1:1080", "https://canary:%s@127.0.0.1:3128"):
        password = "CANARYproxypw%08x" % ctx.rng.getrandbits(32)
        _variant(ctx, "https_proxy=%s" % (template % "<password>"))
        plane = ctx.step_plane(inputs=csv_inputs(1), tls=True, extra_env={"https_proxy": template % password})
        plane.extra_secrets.append(password)
        plane.run()
        expect_exit(ctx, plane, 10, "a proxy variable no request can use is a configuration no retry fixes")
        expect_no_marker(ctx, plane, "the run never started")
        ctx.expect(not plane.store.transcript, expected="no request (refused at start-up)",
                   actual=plane.describe_exchanges(),
                   diagnosis="refuse a proxy variable that is not an http:// URL at start-up, before any request")
        lines = stderr_lines(plane.result)
        ctx.expect(any("https_proxy" in line.lower() for line in lines),
                   expected="a stderr line naming the variable https_proxy",
                   actual="stderr: %r" % lines[:3],
                   diagnosis="say which variable is wrong, so the operator knows what to fix (STEP-PROXY-1)")
        ctx.expect(password not in plane.result.stderr + plane.result.stdout,
                   expected="the password in no output", actual="it was printed",
                   diagnosis="never quote a proxy variable's value: it may carry a password (STEP-PROXY-5)")
        expect_diagnostics(ctx, plane, why="a start-up failure")


@check("proxy.no-proxy", clauses=["STEP-PROXY-2"], level="MUST",
       title="NO_PROXY entries that match the host send its requests straight to the store",
       fakes="the node behind the proxy; NO_PROXY (and no_proxy) in turn: a list holding the store's address, "
             "the store's name localhost in other case, `*`, the store's address with its port, and the parent "
             "domain of an input's host (with and without a leading dot)",
       expected="the proxy sees no request for the host the entry matches; the runs on the store's host succeed")
def _(ctx):
    cases = (
        ("an address in a list separated by commas and spaces", "example.invalid, 127.0.0.1  other.invalid", None),
        ("a name in other case", "LocalHost", "localhost"),
        ("`*` alone", "*", None),
        ("an address with the store's port", "127.0.0.1:{port}", None),
    )
    for why, value, store_host in cases:
        plane = ctx.step_plane(inputs=csv_inputs(1), proxy=True, store_host=store_host)
        plane.no_proxy = value.format(port=plane.store.server.port)
        _variant(ctx, "NO_PROXY=%r: %s" % (plane.no_proxy, why))
        plane.run()
        _expect_success(ctx, plane, "the store is reached directly")
        _expect_unproxied(ctx, plane, "NO_PROXY %r matches the store's host" % plane.no_proxy)

    def on_unresolvable_host(doc):
        entry = doc["inputs"][0]
        entry["get_url"] = entry["get_url"].replace("127.0.0.1", UNRESOLVABLE_HOST, 1)

    for entry in (UNRESOLVABLE_PARENT, "." + UNRESOLVABLE_PARENT):
        _variant(ctx, "NO_PROXY=%r; the input's URL names %s (no resolver knows it)" % (entry, UNRESOLVABLE_HOST))
        plane = ctx.step_plane(inputs=csv_inputs(1), proxy=True, no_proxy=entry, envelope_patch=on_unresolvable_host,
                               proxy_hosts={UNRESOLVABLE_HOST: "127.0.0.1"})
        plane.run()
        named = [r for r in plane.proxy.requests if (r.host or "").lower() == UNRESOLVABLE_HOST]
        ctx.expect(not named, expected="no request for %s at the proxy (NO_PROXY %r names its parent domain)"
                                       % (UNRESOLVABLE_HOST, entry),
                   actual="the proxy saw: %s" % "; ".join("%s %s" % (r.method, r.target) for r in named),
                   diagnosis="a name entry matches the host itself and every name under it (STEP-PROXY-2)")
        ctx.expect(plane.proxy.requests, expected="the manifest's request at the proxy (its host is not exempt)",
                   actual="the proxy saw nothing",
                   diagnosis="only the hosts NO_PROXY matches bypass the proxy (STEP-PROXY-2)")


@check("proxy.no-proxy-miss", clauses=["STEP-PROXY-2"], level="MUST",
       title="NO_PROXY entries that do not match the host leave its requests on the proxy",
       fakes="the node behind the proxy; NO_PROXY in turn: the store's address with another port, `calhost` "
             "while the store is named localhost, `0.0.1` while it is 127.0.0.1",
       expected="every run succeeds and every connection the store accepted came through the proxy")
def _(ctx):
    cases = (
        ("the store's address with another port", "127.0.0.1:{other}", None),
        ("text the store's name ends with, not a whole label", "calhost", "localhost"),
        ("digits the store's address ends with (an address matches only itself)", "0.0.1", None),
    )
    for why, value, store_host in cases:
        plane = ctx.step_plane(inputs=csv_inputs(1), proxy=True, store_host=store_host)
        plane.no_proxy = value.format(other=plane.store.server.port % 60000 + 1)
        _variant(ctx, "NO_PROXY=%r: %s" % (plane.no_proxy, why))
        plane.run()
        _expect_success(ctx, plane, "the proxy forwards")
        _expect_forwarded(ctx, plane, host=store_host or "127.0.0.1")


@check("proxy.refused", clauses=["STEP-PROXY-3", "STEP-PROXY-4", "STEP-HTTP-3"], level="MUST",
       title="a proxy that refuses or resets is a transient failure, reported with its status, never a traceback",
       fakes="the proxy (with credentials) answers the first CONNECT 407, 403 or 502, or resets it; then, for a "
             "plain-HTTP store, answers the first request 407",
       expected="exit 1 and a failed marker whose error names the status; no traceback, no credential anywhere")
def _(ctx):
    cases = [(True, faults.status(code), Match(method="CONNECT", first=1), str(code)) for code in (407, 403, 502)]
    cases += [(True, faults.reset(0), Match(method="CONNECT", first=1), None),
              (False, faults.status(407), Match(method="GET", first=1), "407")]
    for tls, fault, match, named in cases:
        _variant(ctx, "%s store; the proxy answers %s (%s)" % ("HTTPS" if tls else "HTTP", fault.describe(),
                                                               match.describe()))
        plane = ctx.step_plane(inputs=csv_inputs(1), tls=tls, proxy=True, proxy_credentials=True)
        plane.proxy.add_fault(fault, match)
        plane.run()
        expect_exit(ctx, plane, 1, "the proxy's refusal says nothing about the work: transient (D41)")
        marker = expect_marker(ctx, plane, "failed", 1)
        if named:
            ctx.expect(named in str(marker.get("error")),
                       expected="the marker's error names the proxy's status %s" % named,
                       actual="error %r" % marker.get("error"),
                       diagnosis="say what the proxy answered, so the operator can tell its refusal from the "
                                 "store's (STEP-PROXY-3)")
        expect_diagnostics(ctx, plane, why="a refused proxy")


@check("proxy.connect-deadline", clauses=["STEP-STOP-3", "STEP-PROXY-3"], level="MUST",
       title="a proxy that never answers CONNECT is given up within the one 10 s connect deadline",
       fakes="HTTPS store; the proxy reads the first CONNECT and never answers it; no signal",
       expected="exit 1 within 14 s; failed marker")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1), tls=True, proxy=True)
    plane.proxy.add_fault(faults.hang(), Match(method="CONNECT", first=1))
    plane.run(timeout=DEADLINE_RUN_TIMEOUT_S)
    expect_exit(ctx, plane, 1, "a connect deadline is transient")
    ctx.expect(plane.result.wall_s <= CONNECT_DEADLINE_S + DEADLINE_SLACK_S,
               expected="exit within %.0f s (deadline %.0f s)" % (CONNECT_DEADLINE_S + DEADLINE_SLACK_S,
                                                                  CONNECT_DEADLINE_S),
               actual="%.1f s" % plane.result.wall_s,
               diagnosis="the wait for the proxy's answer lies within the connect deadline: read it with the "
                         "time left, never a fresh timeout (STEP-PROXY-3, D21)")
    expect_marker(ctx, plane, "failed", 1)


@check("proxy.stop-connect", clauses=["STEP-STOP-3", "STEP-PROXY-3"], level="MUST",
       title="SIGTERM while the proxy withholds its answer to CONNECT ends the run at once",
       fakes="HTTPS store; the proxy reads the input's CONNECT and never answers it; SIGTERM 0.5 s later",
       expected="exit 20 within 1 s; cancelled marker (written through the proxy)")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1), tls=True, proxy=True)
    plane.proxy.add_fault(faults.hang(), Match(method="CONNECT", skip=1, first=1))
    plane.start()
    held = plane.proxy.wait_for(lambda ev: ev.kind == "fault", REACH_TIMEOUT_S)
    if held is None:
        plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
        ctx.fail(expected="the node to send the input's CONNECT to the proxy",
                 actual="it did not (%s; proxy: %s)" % (plane.result.describe(), plane.proxy.describe()),
                 diagnosis="the run never reached the phase this check stops it in")
    time.sleep(SETTLE_S)
    plane.proc.signal(signal.SIGTERM)
    ctx.note("plane: sent SIGTERM while the proxy held the input's CONNECT")
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    expect_prompt_stop(ctx, plane, diagnosis=SLOW_STOP_IN_CONNECT)


@check("proxy.credentials", clauses=["STEP-PROXY-5", "STEP-PROXY-3", "STEP-PROXY-4", "STEP-REDACT-1"], level="MUST",
       title="a proxy URL's user and password reach the proxy, decoded, and nothing else",
       fakes="the proxy demands canary credentials (the password holds `/` and `%`, percent-encoded in the URL); "
             "runs: HTTPS store, HTTP store, and HTTPS with the first CONNECT answered 407",
       expected="the first two succeed with the decoded credentials on every proxy request and no "
                "Proxy-Authorization at the store; the third exits 1; no form of the credentials in any output, "
                "the marker, result.json or a stored object")
def _(ctx):
    for tls, refuse in ((True, False), (False, False), (True, True)):
        _variant(ctx, "%s store%s" % ("HTTPS" if tls else "HTTP", "; the first CONNECT answered 407" if refuse else ""))
        plane = ctx.step_plane(inputs=csv_inputs(1), tls=tls, proxy=True, proxy_credentials=True)
        if refuse:
            plane.proxy.add_fault(faults.status(407), Match(method="CONNECT", first=1))
        plane.run()
        if refuse:
            expect_exit(ctx, plane, 1, "a refused tunnel is transient")
        else:
            _expect_success(ctx, plane, "the credentials the proxy demands were sent")
            ctx.expect(plane.proxy.requests, expected="the run's requests at the proxy", actual="none came",
                       diagnosis="a node behind a proxy uses it (STEP-PROXY-1)")
            wrong = [r for r in plane.proxy.requests if r.credentials != plane.proxy.credentials]
            ctx.expect(not wrong, expected="Proxy-Authorization: Basic with the percent-decoded user and password "
                                           "on every request to the proxy",
                       actual="%d request(s) without them: %s" % (len(wrong), "; ".join(
                           "%s %s (%s)" % (r.method, r.target, "wrong credentials" if r.authorization else
                                           "no Proxy-Authorization") for r in wrong[:3])),
                       diagnosis="send the proxy URL's user and password, percent-decoded, as Basic credentials "
                                 "(STEP-PROXY-3, -4)")
        at_store = [ex for ex in plane.store.transcript
                    if any(name.lower() == "proxy-authorization" for name, _value in ex.headers)]
        ctx.expect(not at_store, expected="no Proxy-Authorization header at the store",
                   actual="%d request(s) carried one to the store" % len(at_store),
                   diagnosis="the proxy's credentials go to the proxy only, never through the tunnel (STEP-PROXY-5)")
        secrets = plane.proxy.secrets()
        for key in sorted(plane.store.objects()):
            if not key.startswith(KEY_PREFIX):
                continue
            data = plane.collector.read_stored(key[len(KEY_PREFIX):]) or b""
            leaked = [s for s in secrets if s.encode("utf-8") in data]
            ctx.expect(not leaked, expected="no form of the proxy's credentials in the stored object %s" % key,
                       actual="%d form(s) of them in it" % len(leaked),
                       diagnosis="the proxy's user and password are secrets (STEP-PROXY-5)")
