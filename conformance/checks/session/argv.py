"""The command line: the few lines the node answers, everything else refused before any request.

SESSION-ARGV-1 lists the command lines a node file answers; SESSION-ARGV-2 fixes Job mode's six
cells in one order, because Job overrides are a security boundary (no order, abbreviation or
`--flag=value` form is admitted); SESSION-ARGV-3 holds the dispatch id to a canonical UUID4 and
both URLs to https URLs. Every refusal here comes before any request and any file, and its one
stderr line repeats no token of the command line (argv may have been filled with a secret by
mistake), so each variant also asserts that no fake saw a request.
"""

from conformance.checks import check
from conformance.checks.session._common import each_variant, expect_code_line, expect_no_request
from conformance.timeouts import SHORT_TIMEOUT_S

ID_FLAG, URL_FLAG, AUDIENCE_FLAG = ("--session-dispatch-id", "--session-dispatch-exchange-url",
                                    "--session-dispatch-audience")
# A token no stderr line may repeat: distinctive, so a hit can only be an echo of the command line.
CANARY_TOKEN = "CANARYARGV51c9e0"
# A canonical UUID of version 1 (ARGV-3 wants version 4).
VERSION1_ID = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"


def _cells(plane, dispatch_id=None, url=None, audience=None):
    """The plane's six cells, with any value replaced."""
    control = plane.control
    return [ID_FLAG, dispatch_id or control.dispatch_id, URL_FLAG, url or control.exchange_url,
            AUDIENCE_FLAG, audience or control.exchange_audience]


# SESSION-ARGV-1, -2: command lines no node answers; each builds its argv from the plane's six cells.
USAGE_ERRORS = [
    ("--flag=value form", lambda c: ["%s=%s" % (c[0], c[1]), "%s=%s" % (c[2], c[3]), "%s=%s" % (c[4], c[5])]),
    ("audience first", lambda c: c[4:6] + c[0:4]),
    ("audience missing", lambda c: c[0:4]),
    ("id repeated for the audience", lambda c: c[0:4] + c[0:2]),
    ("a seventh cell", lambda c: c + [CANARY_TOKEN]),
    ("empty dispatch id", lambda c: [c[0], ""] + c[2:6]),
    ("abbreviated flag", lambda c: ["--session-dispatch"] + c[1:6]),
    ("--help with another token", lambda c: ["--help", CANARY_TOKEN]),
]

# SESSION-ARGV-3: dispatch values that are not what the contract asks (label, cells -> argv).
BAD_DISPATCH_VALUES = [
    ("uppercase id", lambda p: _cells(p, dispatch_id=p.control.dispatch_id.upper())),
    ("braced id", lambda p: _cells(p, dispatch_id="{%s}" % p.control.dispatch_id)),
    ("urn:uuid: id", lambda p: _cells(p, dispatch_id="urn:uuid:" + p.control.dispatch_id)),
    ("id without hyphens", lambda p: _cells(p, dispatch_id=p.control.dispatch_id.replace("-", ""))),
    ("version-1 id", lambda p: _cells(p, dispatch_id=VERSION1_ID)),
    ("plain-HTTP exchange URL", lambda p: _cells(p, url="http" + p.control.exchange_url[5:])),
    ("plain-HTTP audience", lambda p: _cells(p, audience="http" + p.control.exchange_audience[5:])),
]


@check("argv.usage", clauses=["SESSION-ARGV-1", "SESSION-ARGV-2"], level="MUST",
       title="a command line the node does not answer exits 2 with one fixed stderr line and no request",
       fakes="a healthy plane; the node is started with a wrong command line (one variant per run): the "
             "--flag=value form, another order, a missing or repeated flag, a seventh cell, an empty value, an "
             "abbreviation, --help with another token",
       expected="exit 2; exactly one stderr line `SESSION_DISPATCH_ARGUMENTS_INVALID: ...` repeating no token "
                "of the command line; no request at any fake")
def _(ctx):
    def act(label, build):
        # Arrange
        plane = ctx.plane()
        cells = _cells(plane)
        argv = build(cells)
        # Act
        plane.close_session()  # a node that wrongly goes on ends at its first claim
        plane.run(argv=argv)
        # Assert: the values of the cells are tokens no stderr line may repeat
        expect_code_line(ctx, plane.result, "SESSION_DISPATCH_ARGUMENTS_INVALID", 2, label, alone=True,
                         hidden=[cells[1], cells[3], cells[5], CANARY_TOKEN])
        expect_no_request(ctx, plane, label)

    each_variant(ctx, USAGE_ERRORS, act)


@check("argv.help", clauses=["SESSION-ARGV-1"], level="MUST",
       title="--help or -h alone prints a usage text on stdout and exits 0, sending nothing",
       fakes="a healthy plane that only watches; the node is started with `--help`, then with `-h`",
       expected="exit 0; a usage text on stdout; no request at any fake")
def _(ctx):
    def act(label, token):
        # Arrange: started beside the plane, not through it: the plane's output rules judge sessions,
        # and a usage text is not a summary line.
        plane = ctx.plane()
        # Act
        result = ctx.start_node(plane.env(), args=[token]).wait(SHORT_TIMEOUT_S)
        # Assert
        ctx.expect(result.exit_code == 0 and result.stdout.strip() != "",
                   expected="exit 0 and a usage text on stdout for %s" % token,
                   actual="exit %s; stdout %r; stderr %r" % (result.exit_code, result.stdout[:120],
                                                            result.stderr[:200]),
                   diagnosis="`%s` alone asks for the usage text, on stdout, and succeeds" % token)
        expect_no_request(ctx, plane, label)

    each_variant(ctx, [("--help", "--help"), ("-h", "-h")], act)


@check("argv.dispatch-values", clauses=["SESSION-ARGV-3", "SESSION-ARGV-1"], level="MUST",
       title="a dispatch id that is not a canonical UUID4, or a URL that is not https, exits 2 before any "
             "request",
       fakes="a healthy plane; Job mode's six cells with one value wrong (one variant per run): the id in upper "
             "case, in braces, with urn:uuid:, without hyphens, of version 1; an http:// exchange URL; an "
             "http:// audience",
       expected="exit 2; a stderr line `SESSION_DISPATCH_INVALID: ...` repeating no value of the command line; "
                "no request at any fake")
def _(ctx):
    def act(label, build):
        plane = ctx.plane()
        argv = build(plane)
        plane.close_session()  # a node that wrongly goes on ends at its first claim
        plane.run(argv=argv)
        expect_code_line(ctx, plane.result, "SESSION_DISPATCH_INVALID", 2, label, hidden=[argv[1], argv[3], argv[5]])
        expect_no_request(ctx, plane, label)

    each_variant(ctx, BAD_DISPATCH_VALUES, act)
