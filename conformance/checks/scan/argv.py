"""The command line: the lines the worker answers, its exit statuses, and the slot count
(SCAN-ARGV-1 to SCAN-ARGV-3).

A supervisor starts the worker from a unit file and acts on how it ends, so every wrong command
line must end the same way before anything happens (exit 64, one stderr line, no file, no
request) and each end must have its own status: a usage error that exits 2 looks like a forced
stop, one that exits 0 looks like a clean drain. The value of a bad option is never repeated: argv
may hold a token by mistake.
"""

from conformance.checks import check
from conformance.checks.scan._common import (CANARY, PHASE_TIMEOUT_S, RUN_TIMEOUT_S, describe_run, each_variant,
                                             expect_usage, run_to_exit, stdout_lines)

# SCAN-ARGV-2: the statuses a check can provoke here.
EXIT_OK, EXIT_STOPPED, EXIT_LOCKED = 0, 2, 75
LOCKED_LINE = "worker: another worker holds this state directory"

# SCAN-ARGV-1: command lines no worker answers: (label, argv from the plane, names the line may use).
USAGE_ERRORS = [
    ("an unknown option", lambda p: p.argv(extra=["--bogus-option", CANARY]), ["--bogus-option"]),
    ("no --server", lambda p: p.argv()[2:], ["--server"]),
    ("--server without a value", lambda p: p.argv()[2:] + ["--server"], ["--server"]),
    ("a --parallelism that does not parse", lambda p: p.argv(parallelism=CANARY), ["--parallelism"]),
    # D28: the upstream's own options may be abbreviated as its argparse allows (area PEER); this
    # worker's own options may not
    ("an abbreviation of an option the upstream does not have", lambda p: p.argv(extra=["--poll", "1"]),
     ["--poll"]),
]

# SCAN-ARGV-3: parallelism values outside 1..128, or not a decimal integer.
BAD_PARALLELISM = [("0", "0"), ("129", "129"), ("-1", "-1"), ("1.5", "1.5"), ("0x10", "0x10"), ("1e2", "1e2")]
MAX_PARALLELISM = 128


@check("argv.usage", clauses=["SCAN-ARGV-1", "SCAN-ARGV-2", "SCAN-CONFIG-1"], level="MUST",
       title="a command line the worker does not answer exits 64 with one line naming the option, and does nothing",
       fakes="a healthy plane; the worker is started with an unknown option (its value a canary), without --server, "
             "with --server and no value, a --parallelism that does not parse, an abbreviation of --poll-seconds",
       expected="exit 64; one stderr line naming the option and not the canary; nothing on stdout; no connection "
                "to any fake; nothing under XDG_STATE_HOME or XDG_DATA_HOME")
def _(ctx):
    def act(label, variant):
        build, names = variant
        # Arrange
        plane = ctx.plane()
        # Act
        result = run_to_exit(plane, argv=build(plane))
        # Assert
        expect_usage(ctx, plane, result, label, names)

    each_variant(ctx, [(label, (build, names)) for label, build, names in USAGE_ERRORS], act)


@check("argv.help", clauses=["SCAN-ARGV-1"], level="MUST",
       title="--help prints a usage text and exits 0, sending nothing",
       fakes="a healthy plane; the worker is started with --help alone",
       expected="exit 0; a usage text on stdout; no connection to any fake")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    # Act
    result = run_to_exit(plane, argv=["--help"])
    # Assert
    ctx.expect(result.exit_code == 0 and (result.stdout or "").strip(),
               expected="exit 0 and a usage text on stdout",
               actual="exit %s, stdout %r" % (result.exit_code, (result.stdout or "")[:200]),
               diagnosis="answer --help alone with a usage text on stdout and exit 0, with nothing else set")
    ctx.expect(not plane.server.server.connections and not plane.server.calls(),
               expected="no connection to the scan server", actual=describe_run(plane),
               diagnosis="--help sends nothing: print the usage before reading the configuration or opening a "
                         "connection")


@check("argv.statuses", clauses=["SCAN-ARGV-2"], level="MUST",
       title="a held lock exits 75, a drain of an idle worker 0, a stop 2",
       fakes="no work; a first worker runs; a second is started on the same trees; the first gets SIGTERM; a third "
             "is started and gets SIGINT",
       expected="the second exits 75 printing the lock line; the first exits 0; the third exits 2")
def _(ctx):
    import signal
    # Arrange
    plane = ctx.plane()
    first = plane.start()
    plane.wait_ready(first)
    plane.wait_claims(1)
    # Act
    second = plane.start()
    locked = second.wait(RUN_TIMEOUT_S)
    drained = first.stop(signal.SIGTERM, RUN_TIMEOUT_S)
    third = plane.start()
    plane.wait_ready(third)
    stopped = third.stop(signal.SIGINT, RUN_TIMEOUT_S)
    # Assert
    ctx.expect(locked.exit_code == EXIT_LOCKED and LOCKED_LINE in stdout_lines(locked),
               expected="the second worker exits %d and prints %r" % (EXIT_LOCKED, LOCKED_LINE),
               actual="exit %s, stdout %r" % (locked.exit_code, stdout_lines(locked)[:3]),
               diagnosis="a held state directory is EXIT_LOCKED (try later), distinct from every other end")
    ctx.expect(drained.exit_code == EXIT_OK,
               expected="an idle worker's drain (SIGTERM) exits %d" % EXIT_OK,
               actual="exit %s" % drained.exit_code,
               diagnosis="end with sys.exit(status): the status is the process's (D1)")
    ctx.expect(stopped.exit_code == EXIT_STOPPED,
               expected="a stop (SIGINT) exits %d" % EXIT_STOPPED,
               actual="exit %s" % stopped.exit_code,
               diagnosis="a stop is EXIT_STOPPED, so a supervisor can tell it from a drain")


@check("argv.parallelism", clauses=["SCAN-ARGV-3"], level="MUST",
       title="--parallelism outside 1..128 is a usage error; 128 starts",
       fakes="a healthy plane with no work; --parallelism 0, 129, -1, 1.5, 0x10, 1e2; then 128 (stopped by SIGTERM "
             "once ready)",
       expected="each bad value: exit 64, one line naming --parallelism and not the value, no request, no slot "
                "file; 128: the ready line says 128 slots")
def _(ctx):
    def act(label, value):
        plane = ctx.plane()
        result = run_to_exit(plane, parallelism=value)
        expect_usage(ctx, plane, result, "--parallelism %s" % label, ["--parallelism"], hidden=())

    each_variant(ctx, BAD_PARALLELISM, act)
    # Arrange
    plane = ctx.plane()
    # Act
    life = plane.start(parallelism=MAX_PARALLELISM)
    plane.wait_ready(life, timeout=PHASE_TIMEOUT_S)
    result = plane.stop()
    # Assert
    wanted = "worker: started with %d slots" % MAX_PARALLELISM
    ctx.expect(wanted in stdout_lines(result),
               expected="the ready line %r" % wanted,
               actual="stdout %r" % stdout_lines(result)[:3],
               diagnosis="128 is within MIN_PARALLELISM..MAX_PARALLELISM and must start")
