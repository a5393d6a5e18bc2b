"""REDACT: the token never shows (the plane's invariant does the looking)."""

from conformance.checks import check
from conformance.checks._selftest.plane import ToyPlane


@check("redact.token", clauses=["SELFTEST-REDACT-1"], level="MUST",
       title="the token appears in no output, argv or file",
       fakes="TOY_TOKEN is a canary", expected="exit 0; the canary nowhere (invariant)")
def _(ctx):
    plane = ctx.use(ToyPlane(ctx))
    result = plane.run()
    ctx.expect(result.exit_code == 0, expected="exit 0", actual="exit %s" % result.exit_code,
               diagnosis="a run with a token set ends with exit 0, like any other")
