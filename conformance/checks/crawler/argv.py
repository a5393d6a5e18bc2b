"""The argument: the upstream's command lines, usage errors that echo nothing, a canonical session id.

CRAWLER-ARGV-1 takes the command lines the upstream's argparse takes for its one
option (the forms themselves are judged in the peer area, CRAWLER-PEER-2) and
gives every other command line exit 2 and a fixed usage text on stderr that
repeats no token of the command line (D1). CRAWLER-ARGV-2 then holds the value
to the canonical UUID spelling, refused stderr-only before any request.

Every refusal here must happen before the node touches the network, so each
variant also asserts that no fake (metadata server, broker, source, store,
tripwire) saw a request.
"""

from conformance.checks import check
from conformance.checks.crawler._common import (
    SESSION_ID, expect_no_network, expect_outcome, expect_success, run_variants)
from conformance.timeouts import SHORT_TIMEOUT_S

OPTION = "--crawler-session-id"

# Tokens a usage error must not echo: distinctive, so a hit on stderr can only
# be an echo of the command line.
CANARY_ARG = "CANARYARG7f3d"
CANARY_OPTION = "--bogus-CANARYOPT"
# A canonical UUID of version 1: ARGV-2 accepts any version.
VERSION1_SESSION_ID = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"

# Each usage error: (label, argv after the node file, tokens that must not
# appear on stderr). The option's own spelling is not listed: the usage text
# names it. argparse refuses each of these (so does the upstream), and its
# own message would repeat the tokens.
USAGE_ERRORS = [
    ("unknown token after the option", [OPTION, SESSION_ID, CANARY_OPTION, CANARY_ARG],
     [SESSION_ID, CANARY_OPTION, CANARY_ARG]),
    ("a longer spelling of the option", [OPTION + "-" + CANARY_ARG, SESSION_ID], [CANARY_ARG, SESSION_ID]),
    ("the option with one dash", [OPTION[1:], SESSION_ID], [SESSION_ID]),
    ("missing value", [OPTION], []),
    ("a value that looks like an option", [OPTION, "-" + CANARY_ARG], [CANARY_ARG]),
    ("no option", [], []),
    ("positional session id", [SESSION_ID], [SESSION_ID]),
]

# Session ids that are UUIDs to uuid.UUID() but not in their canonical text form.
NON_CANONICAL_SESSION_IDS = [
    ("uppercase", SESSION_ID.upper()),
    ("braces", "{%s}" % SESSION_ID),
    ("32 hex digits without hyphens", SESSION_ID.replace("-", "")),
    ("urn:uuid: prefix", "urn:uuid:" + SESSION_ID),
    ("trailing space", SESSION_ID + " "),
    ("leading space", " " + SESSION_ID),
]


@check("argv.usage-no-echo", clauses=["CRAWLER-ARGV-1"], level="MUST",
       title="a command line the upstream's argparse refuses is a usage error that echoes no token",
       fakes="a complete, healthy plane; the node is started with a command line argparse refuses (one variant "
             "per run): an unknown token, a longer spelling of the option, the option with one dash, a missing "
             "value, a value that starts with '-', no option, a bare session id",
       expected="exit 2; a usage text on stderr that contains no token of the command line; no request")
def _(ctx):
    def act(label, value):
        args, secret_tokens = value
        # Arrange
        plane = ctx.plane()
        # Act
        plane.run(args=args)
        # Assert
        result = plane.result
        ctx.expect(result.exit_code == 2, expected="exit 2 (a usage error) for argv %r (variant %s)" % (args, label),
                   actual="exit %s; stderr %r" % (result.exit_code, result.stderr[:200]),
                   diagnosis="the command lines the upstream's argparse refuses are usage errors (D1)")
        ctx.expect(result.stderr.strip() != "" and plane.status_line() is None,
                   expected="a usage text on stderr (variant %s)" % label,
                   actual="stderr %r" % result.stderr[:200],
                   diagnosis="a usage error prints the usage text, not a status line and not nothing")
        echoed = [token for token in secret_tokens if token in result.stderr]
        ctx.expect(not echoed, expected="stderr without any token of the command line (variant %s)" % label,
                   actual="stderr repeats %s" % ", ".join(repr(t) for t in echoed),
                   diagnosis="the usage text must be fixed: a mistyped command line can carry a credential (D1)")
        expect_no_network(ctx, plane, label)
        return plane

    run_variants(ctx, [(label, (args, tokens)) for label, args, tokens in USAGE_ERRORS], act)


@check("argv.help", clauses=["CRAWLER-ARGV-1"], level="MUST",
       title="--help or -h alone prints a usage text on stdout and exits 0",
       fakes="a complete, healthy plane; the node is started with `--help`, then with `-h`",
       expected="exit 0; a usage text on stdout; no request")
def _(ctx):
    def act(label, token):
        # Arrange: the plane only watches the network; the node is started
        # directly, because its invariants judge job runs (stdout empty, a
        # silent exit 0 stores a result), which a help run is not.
        plane = ctx.plane()
        # Act
        result = ctx.start_node(plane.env(), args=[token]).wait(SHORT_TIMEOUT_S)
        # Assert
        ctx.expect(result.exit_code == 0 and result.stdout.strip() != "",
                   expected="exit 0 and a usage text on stdout for %s" % token,
                   actual="exit %s; stdout %r; stderr %r" % (result.exit_code, result.stdout[:120],
                                                            result.stderr[:200]),
                   diagnosis="`%s` alone asks for the usage text, on stdout, and succeeds" % token)
        expect_no_network(ctx, plane, label)
        return plane

    run_variants(ctx, [("--help", "--help"), ("-h", "-h")], act)


@check("argv.equals-form", clauses=["CRAWLER-ARGV-1"], level="MUST",
       title="`--crawler-session-id=VALUE` is accepted like the two-token form",
       fakes="a healthy plane; the node is started with `--crawler-session-id=<sid>` as one token",
       expected="exit 0, silent, the result stored")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    # Act
    plane.run(args=["%s=%s" % (OPTION, SESSION_ID)])
    # Assert
    expect_success(ctx, plane)


@check("argv.session-canonical", clauses=["CRAWLER-ARGV-2"], level="MUST",
       title="a session id not in canonical UUID form is refused before any request",
       fakes="a complete, healthy plane; the session id is uppercase, in braces, without hyphens, "
             "urn:uuid:-prefixed, or has a leading or trailing space (one variant per run); then a canonical "
             "version-1 UUID",
       expected="CRAWLER_JOB_ARGUMENT_INVALID failed, exit 1, no request; the version-1 UUID runs to success")
def _(ctx):
    def act(label, session_id):
        # Arrange
        plane = ctx.plane()
        # Act
        plane.run(args=[OPTION, session_id])
        # Assert
        expect_outcome(ctx, plane, "CRAWLER_JOB_ARGUMENT_INVALID", "failed", 1, label)
        expect_no_network(ctx, plane, label)
        return plane

    run_variants(ctx, NON_CANONICAL_SESSION_IDS, act)
    # Any version: a canonical version-1 UUID is a valid session id.
    ctx.note("variant: canonical version-1 UUID (accepted)")
    plane = ctx.plane(session_id=VERSION1_SESSION_ID)
    plane.run()
    expect_success(ctx, plane)
