"""GREET: the toy node greets on stdout."""

from conformance.checks import check
from conformance.checks._selftest.plane import ToyPlane


@check("greet.hello", clauses=["SELFTEST-GREET-1"], level="MUST",
       title="greets TOY_NAME on stdout and exits 0",
       fakes="TOY_NAME=world", expected="stdout line 'hello, world'; exit 0")
def _(ctx):
    plane = ctx.use(ToyPlane(ctx))                     # Arrange
    result = plane.run()                               # Act
    lines = [line for _t, line in result.stdout_lines]
    ctx.expect("hello, world" in lines, expected="a stdout line 'hello, world'",
               actual="stdout lines %r" % lines[-5:], diagnosis="the greeting is missing or wrong")
    ctx.expect(result.exit_code == 0, expected="exit 0", actual="exit %s" % result.exit_code,
               diagnosis="a greeting run ends with exit 0")


@check("greet.progress", clauses=["SELFTEST-GREET-2"], level="SHOULD",
       title="reports progress before greeting",
       fakes="TOY_NAME=world", expected="'@toy:progress 0.5' before 'hello, world'")
def _(ctx):
    plane = ctx.use(ToyPlane(ctx))
    result = plane.run()
    lines = [line for _t, line in result.stdout_lines]
    ctx.expect("@toy:progress 0.5" in lines, expected="a stdout line '@toy:progress 0.5'",
               actual="stdout lines %r" % lines[-5:], diagnosis="no progress line was printed")
