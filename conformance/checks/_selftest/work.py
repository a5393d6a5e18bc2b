"""WORK: the toy node's own work (an [example work] clause: judged with --reference only)."""

from conformance.checks import check
from conformance.checks._selftest.plane import ToyPlane


@check("work.farewell", clauses=["SELFTEST-WORK-1"], level="MUST",
       title="says goodbye after greeting",
       fakes="TOY_NAME=world", expected="stdout line 'bye' after 'hello, world'")
def _(ctx):
    plane = ctx.use(ToyPlane(ctx))
    result = plane.run()
    lines = [line for _t, line in result.stdout_lines]
    ctx.expect(lines[-1:] == ["bye"], expected="a last stdout line 'bye'", actual="stdout lines %r" % lines[-5:],
               diagnosis="say 'bye' on stdout as the last line, after the greeting")
