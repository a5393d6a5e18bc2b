"""The bearer token: one source, its form, a private file, never on argv or in the environment of
the running worker, rotations picked up, invalid ones refused, and a 401 that re-reads the file
once (SCAN-TOKEN-1 to SCAN-TOKEN-7).

The token is the worker's whole identity at the server. A file is the only source that rotates;
argv and the environment are accepted for the upstream's host but moved off at once, because
/proc shows both to every local user. A rotation must be picked up before the next request (a
worker that keeps the old token is locked out when its grace ends), an invalid one must not lock
the worker out either, and a 401 must not become a hot loop.
"""

import os

from conformance.checks import check
from conformance.checks.scan._common import (PHASE_TIMEOUT_S, argv_without_token_file, describe_run, each_variant,
                                             expect_usage, live_stdout, run_to_exit)
from conformance.planes.scan import ScanPlane
from conformance.runner import read_cmdline, read_environ

TOKEN_ENV = "TRUF_WORKER_TOKEN"
REJECTED_LINE = "worker: token file rejected, keeping the current token"
# SCAN-TOKEN-3: one byte over MAX_TOKEN_FILE_BYTES.
TOO_BIG_BYTES = 4097
# SCAN-TOKEN-6: claims each rotation must outlive (the 204's Retry-After of 1 s apart), so a
# worker that takes the bad file, or prints its line again, shows it.
CLAIMS_AFTER_WRITE = 2
# SCAN-TOKEN-7: the error delay of the 401 check, and the gap that tells an immediate retry from
# one after the error delay: the delay is at least half its base (SCAN-BACKOFF-1), 1.5 s here,
# while an immediate retry is one more connection, well under 1 s even on a loaded machine.
ERROR_DELAY_401_S = 3.0
IMMEDIATE_S = 1.0
# The ready line of a worker given --token or the variable comes after two interpreter starts
# (the re-exec of SCAN-TOKEN-4): twice a phase's wait on a loaded machine.
REEXEC_READY_S = 2 * PHASE_TIMEOUT_S
# Clock granularity between the worker's wait and the server's arrival stamps.
EPSILON_S = 0.05


def _request_id(call):
    """A claim's request id as sent (the server records it only for a claim it handled itself)."""
    return call.request_id or (call.doc.get("request_id") if isinstance(call.doc, dict) else None)


def _fresh(n=48):
    return ScanPlane.new_token(n)


@check("token.one-source", clauses=["SCAN-TOKEN-1"], level="MUST",
       title="the token comes from exactly one of --token-file, TRUF_WORKER_TOKEN and --token",
       fakes="a healthy plane; started with no token source, then with two sources at once (three pairs)",
       expected="each: exit 64, one stderr line naming a source and not the token, no request, nothing written")
def _(ctx):
    variants = [
        ("no source", lambda p: (argv_without_token_file(p), {})),
        ("--token-file and the variable", lambda p: (p.argv(), {TOKEN_ENV: p.token})),
        ("--token-file and --token", lambda p: (p.argv(extra=["--token", p.token]), {})),
        ("the variable and --token", lambda p: (argv_without_token_file(p) + ["--token", p.token],
                                                {TOKEN_ENV: p.token})),
    ]

    def act(label, build):
        plane = ctx.plane()
        argv, env = build(plane)
        result = run_to_exit(plane, argv=argv, env=env)
        expect_usage(ctx, plane, result, label, ["--token-file", TOKEN_ENV, "--token"], hidden=(plane.token,))

    each_variant(ctx, variants, act)


@check("token.form", clauses=["SCAN-TOKEN-2"], level="MUST",
       title="a token outside 16..512 printable non-space ASCII characters is a usage error; 16 without a newline "
             "is fine",
       fakes="a token file holding 15 characters, a space inside, 513 characters, two trailing newlines; --token "
             "of 15 characters; the variable with a tab inside; then a file of exactly 16 characters and no newline",
       expected="each bad token: exit 64, one line naming its source and showing no part of the token, no request; "
                "the 16-character file: the worker starts and its claims carry it")
def _(ctx):
    short, spaced, long_ = "Short15charsXYZ", "spaced token value 1234", "L" * 513
    variants = [
        ("15 characters in the file", ("file", short + "\n", short)),
        ("a space in the file", ("file", spaced + "\n", "token value 1234")),
        ("513 characters in the file", ("file", long_ + "\n", long_[:40])),
        ("two trailing newlines", ("file", "TwoNewlines0123456789\n\n", "TwoNewlines0123456789")),
        ("15 characters on --token", ("argv", short, short)),
        ("a tab in the variable", ("env", "Tabbed\tToken0123456789", "Token0123456789")),
    ]

    def act(label, variant):
        where, text, hidden = variant
        plane = ctx.plane()
        if where == "file":
            plane.write_token_file(text)
            result = run_to_exit(plane)
            names = ["--token-file"]
        elif where == "argv":
            result = run_to_exit(plane, argv=argv_without_token_file(plane) + ["--token", text])
            names = ["--token"]
        else:
            result = run_to_exit(plane, argv=argv_without_token_file(plane), env={TOKEN_ENV: text})
            names = [TOKEN_ENV]
        expect_usage(ctx, plane, result, label, names, hidden=(hidden,))

    each_variant(ctx, variants, act)
    # Arrange: exactly MIN_TOKEN_CHARS, no trailing newline
    plane = ctx.plane()
    token = plane.rotate_token(_fresh(16))
    plane.write_token_file(token)
    # Act
    plane.start()
    plane.wait_ready()
    claims = plane.wait_claims(1)
    plane.stop()
    # Assert
    ctx.expect(claims[0].auth == "ok",
               expected="a 16-character token file without a newline is accepted and sent",
               actual="the first claim's Authorization was %s" % claims[0].auth,
               diagnosis="accept a token file of 16 characters with no trailing newline and send it whole as the "
                         "bearer token")


@check("token.file-private", clauses=["SCAN-TOKEN-3"], level="MUST",
       title="a token file open to group or others, a symlink, a directory or over 4096 bytes is refused at start",
       fakes="the plane's token file made mode 0644; replaced by a symlink to a private copy; replaced by a "
             "directory; padded to 4097 bytes",
       expected="each: exit 64, one line naming --token-file and not the token, no request, nothing written")
def _(ctx):
    def open_to_others(plane):
        plane.write_token_file(plane.token + "\n", mode=0o644)

    def symlink(plane):
        copy = plane.token_file + ".real"
        with open(copy, "w") as handle:
            handle.write(plane.token + "\n")
        os.chmod(copy, 0o600)
        os.unlink(plane.token_file)
        os.symlink(copy, plane.token_file)

    def directory(plane):
        os.unlink(plane.token_file)
        os.mkdir(plane.token_file, 0o700)

    def too_big(plane):
        plane.write_token_file(plane.token + "\n" + " " * (TOO_BIG_BYTES - len(plane.token) - 1))

    variants = [("mode 0644", open_to_others), ("a symlink", symlink), ("a directory", directory),
                ("4097 bytes", too_big)]

    def act(label, spoil):
        plane = ctx.plane()
        spoil(plane)
        result = run_to_exit(plane)
        expect_usage(ctx, plane, result, label, ["--token-file"], hidden=(plane.token,))

    each_variant(ctx, variants, act)


@check("token.off-argv", clauses=["SCAN-TOKEN-4", "SCAN-SECRET-1"], level="MUST",
       title="a token from --token or TRUF_WORKER_TOKEN is gone from the worker's cmdline and environ once it runs",
       fakes="no work; the worker is started with --token TOKEN, then (another plane) with TRUF_WORKER_TOKEN",
       expected="once the ready line is out and a claim arrived with the token, /proc/<pid>/cmdline and environ of "
                "the same pid hold no 16-character piece of it")
def _(ctx):
    variants = [("--token", "argv"), (TOKEN_ENV, "env")]

    def act(label, where):
        # Arrange
        plane = ctx.plane()
        argv = argv_without_token_file(plane)
        env = {}
        if where == "argv":
            argv += ["--token", plane.token]
        else:
            env[TOKEN_ENV] = plane.token
        # Act
        life = plane.start(argv=argv, env=env)
        plane.wait_ready(life, timeout=REEXEC_READY_S)
        claims = plane.wait_claims(1)
        pid = life.proc.host_pid
        cmdline, environ = read_cmdline(pid), read_environ(pid)
        plane.stop()
        # Assert
        ctx.expect(claims[0].auth == "ok",
                   expected="%s: the claims carry the token given" % label,
                   actual="the first claim's Authorization was %s (%s)" % (claims[0].auth, describe_run(plane)),
                   diagnosis="read the token back from the inherited descriptor after the re-exec")
        ctx.expect(cmdline is not None and environ is not None,
                   expected="%s: the worker's /proc entries readable while it runs (pid %s)" % (label, pid),
                   actual="cmdline %r, environ %s" % (cmdline, "read" if environ is not None else "unreadable"),
                   diagnosis="re-execute in place (the same pid), never as a child")
        pieces = [plane.token[i:i + 16] for i in range(len(plane.token) - 15)]
        argv_text = "\0".join(cmdline or [])
        env_text = "\0".join("%s=%s" % item for item in sorted((environ or {}).items()))
        ctx.expect(not any(piece in argv_text for piece in pieces),
                   expected="%s: /proc/%s/cmdline holds no piece of the token" % (label, pid),
                   actual="it does (%d arguments)" % len(cmdline or []),
                   diagnosis="write the token into a pipe and re-execute without it (D2)")
        ctx.expect(not any(piece in env_text for piece in pieces) and TOKEN_ENV not in (environ or {}),
                   expected="%s: /proc/%s/environ holds no piece of the token and no %s" % (label, pid, TOKEN_ENV),
                   actual="it does",
                   diagnosis="deleting it from os.environ is not enough: /proc shows the environment of the exec "
                             "(re-execute with an environment without it)")

    each_variant(ctx, variants, act)


@check("token.rotation", clauses=["SCAN-TOKEN-5"], level="MUST",
       title="a rotated token file is used from the next request on, with the same request id",
       fakes="one assignment; the first claim is answered 503 (the server granted it); the token file is rotated "
             "(the old token refused from then on) while the worker waits its error delay (2 s base)",
       expected="every request after the first carries the new token and is accepted; the next claim carries the "
                "first claim's request id; the assignment is resolved")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment()
    plane.server.add_fault(plane.server.error_answer(503, "unavailable"), plane.server.claim_match(first=1))
    # Act
    plane.start(error_delay_s=2)
    first = plane.wait_claims(1)[0]
    plane.rotate_token()
    plane.wait_resolved(res)
    plane.stop()
    # Assert
    later = [call for call in plane.server.calls() if call.t > first.t]
    stale = [call for call in later if call.token_index != 1 or call.auth != "ok"]
    ctx.expect(first.token_index == 0 and later and not stale,
               expected="the first claim with token #1, every later request with token #2, accepted",
               actual="%d later request(s) without the new token, the first %s %s (token #%s, %s)" % (
                   len(stale), stale[0].method, stale[0].path, (stale[0].token_index or -1) + 1, stale[0].auth)
               if stale else describe_run(plane),
               diagnosis="stat the token file before every request and re-read it when it changed")
    claims = [call for call in later if call.verb == "claim"]
    ctx.expect(claims and _request_id(claims[0]) == _request_id(first),
               expected="the claim after the rotation carries the request id %s" % _request_id(first),
               actual="it carried %s" % (_request_id(claims[0]) if claims else "nothing"),
               diagnosis="identifiers that make a request idempotent never change with the token")


@check("token.invalid-rotation", clauses=["SCAN-TOKEN-6", "SCAN-TOKEN-3"], level="MUST",
       title="a rotation to a bad token, or to a file open to others, is ignored with one line per change",
       fakes="no work (204, Retry-After 1); the token file is rewritten with 5 characters, then with a new valid "
             "token at mode 0644; the server keeps accepting the first token only",
       expected="every request carries the first token, accepted; `worker: token file rejected, keeping the "
                "current token` exactly once per change: twice")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    life = plane.start()
    plane.wait_ready(life)
    plane.wait_claims(1)
    # Act
    for text, mode in (("short", 0o600), (_fresh() + "\n", 0o644)):
        seen = len(plane.server.claims())
        plane.write_token_file(text, mode=mode)
        plane.wait_claims(seen + CLAIMS_AFTER_WRITE)
    printed = [line for line in live_stdout(life) if line == REJECTED_LINE]
    plane.stop()
    # Assert
    refused = [call for call in plane.server.calls() if call.token_index != 0 or call.auth != "ok"]
    ctx.expect(not refused,
               expected="every request carries the first token",
               actual="%d request(s) did not, the first %s %s (%s)" % (len(refused), refused[0].method,
                                                                      refused[0].path, refused[0].auth)
               if refused else "",
               diagnosis="a rotation that fails SCAN-TOKEN-2 or -3 is not used: keep the token in hand")
    ctx.expect(len(printed) == 2,
               expected="%r printed once per change of the file: twice" % REJECTED_LINE,
               actual="printed %d time(s)" % len(printed),
               diagnosis="remember the rejected file's signature and say it once until the file changes again")


@check("token.401-reread", clauses=["SCAN-TOKEN-7", "SCAN-TOKEN-5"], level="MUST",
       title="a 401 re-reads the file: a new token is retried once at once; no new token, or a 403, waits",
       fakes="one assignment; error delay 3 s; claim 1 answered 403 while the file is rotated; claim 2 answered 401 "
             "with the file unchanged; claim 3 answered 401 while the file is rotated again; claim 4 served",
       expected="claims 2 and 3 each at least half the error delay after the one before; claim 4 within 1 s of "
                "claim 3 with the newest token; one request id; the assignment resolved")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment()

    def refuse(status, rotate):
        def answer(call, _status, _doc):
            if rotate:
                plane.rotate_token()
            return status, {"error": {"code": "unauthorized" if status == 401 else "forbidden",
                                      "message": "refused (%s)" % plane.server.marker}}
        return answer

    plane.server.script("claim", body=refuse(403, True), nth=1)
    plane.server.script("claim", body=refuse(401, False), nth=2)
    plane.server.script("claim", body=refuse(401, True), nth=3)
    # Act
    plane.start(error_delay_s=ERROR_DELAY_401_S)
    plane.wait_resolved(res, timeout=PHASE_TIMEOUT_S + 3 * ERROR_DELAY_401_S)
    plane.stop()
    # Assert
    claims = plane.server.claims()[:4]
    ctx.expect(len(claims) == 4, expected="four claims", actual=describe_run(plane),
               diagnosis="after a 403 or a 401, wait the error delay and claim again; the run made fewer claims than "
                         "that schedule")
    gaps = [b.t - a.t for a, b in zip(claims, claims[1:])]
    half = ERROR_DELAY_401_S / 2 - EPSILON_S
    ctx.expect(gaps[0] >= half and claims[1].token_index == 1,
               expected="after a 403, the error delay (>= %.2f s), then the rotated token" % half,
               actual="the next claim %.2f s later, with token #%s" % (gaps[0], (claims[1].token_index or -1) + 1),
               diagnosis="a 403 is never retried at once")
    ctx.expect(gaps[1] >= half,
               expected="after a 401 with nothing new in the file, the error delay (>= %.2f s)" % half,
               actual="the next claim %.2f s later" % gaps[1],
               diagnosis="retry at once only with a token different from the one refused")
    ctx.expect(gaps[2] < IMMEDIATE_S and claims[3].token_index == 2,
               expected="after a 401 with the file rotated, the same claim at once (< %.1f s) with the new token"
                        % IMMEDIATE_S,
               actual="%.2f s later, with token #%s" % (gaps[2], (claims[3].token_index or -1) + 1),
               diagnosis="a 401 re-reads the token file at once and retries once with a new token")
    ids = set(_request_id(call) for call in claims)
    ctx.expect(len(ids) == 1,
               expected="the four claims carry one request id (the state kept)",
               actual="%d request ids" % len(ids),
               diagnosis="a 401 or 403 is not reconciliation: nothing is discarded")
