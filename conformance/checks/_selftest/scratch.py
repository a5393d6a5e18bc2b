"""SCRATCH: scratch files are removed (the plane's invariant checks TMPDIR)."""

from conformance.checks import check
from conformance.checks._selftest.plane import ToyPlane


@check("scratch.empty", clauses=["SELFTEST-SCRATCH-1"], level="MUST",
       title="TMPDIR is empty after the run",
       fakes="TOY_SCRATCH=1: the node writes a scratch file", expected="exit 0; TMPDIR empty (invariant)")
def _(ctx):
    plane = ctx.use(ToyPlane(ctx))
    result = plane.run(TOY_SCRATCH="1")
    ctx.expect(result.exit_code == 0, expected="exit 0", actual="exit %s" % result.exit_code,
               diagnosis="a run that uses scratch ends with exit 0")
