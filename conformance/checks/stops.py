"""What a run shows about a stop signal: did the node notice it at all?

A stop check that fails can mean two different things, with two different
fixes. Either the node never noticed the signal (no handler was installed, or
SIGINT was ignored, and as PID 1 of a container the kernel drops a signal
without a handler), or it noticed and then did the wrong thing (a blocked read
was not interrupted, a request was started after it). The run tells them
apart: a node that noticed leaves the contract's own trace of a stop (its
acknowledgement on stderr, a cancelled status or exit code, a stopping line),
and a node killed by the signal's default action exits -N.

`unnoticed` turns that evidence into the diagnosis of the first case, or None
when the node did notice; each contract's checks say what its trace of a stop
is (`noticed`) and keep their own sentence for the second case.
"""

import signal

__all__ = ["unnoticed", "signal_name", "signals_sent"]


def signal_name(signum):
    try:
        return signal.Signals(signum).name
    except ValueError:
        return "signal %d" % signum


def signals_sent(result):
    """The signal numbers the harness sent the node, in order (an empty list when none)."""
    return [signum for _t, signum in (getattr(result, "signals", None) or [])]


def unnoticed(result, noticed, trace="", signum=None):
    """The diagnosis for a run whose stop the node shows no sign of having
    handled, or None when it did (or no signal was sent).

    result   the node's RunResult (its exit status, whether it was PID 1, its stderr)
    noticed  True when the run holds the contract's trace of a handled stop
    trace    what that trace is, for the sentence ("no stderr line acknowledges the stop")
    signum   the signal whose handling is in question (default: the first one sent)
    """
    sent = signals_sent(result)
    if result is None or not sent:
        return None
    signum = sent[0] if signum is None else signum
    name = signal_name(signum)
    install = "install a %s handler at the start of main()%s" % (
        name, ", the same as SIGTERM's" if signum == signal.SIGINT else "")
    if result.exit_code == -signum:
        if signum == signal.SIGINT:
            return "no handler ran: SIGINT ended the node as a KeyboardInterrupt; %s" % install
        return ("no handler ran: the node died of %s's default action (exit -%d); %s (as PID 1 of a container "
                "the kernel drops the signal instead and the node runs on)" % (name, signum, install))
    if noticed:
        return None
    seen = " (%s)" % trace if trace else ""
    if signum == signal.SIGINT:
        # Python's own SIGINT handler raises KeyboardInterrupt wherever the code is: a node
        # that installed none ends as a failure (or a traceback); one that ignores it runs on.
        if "KeyboardInterrupt" in (getattr(result, "stderr", "") or ""):
            return "no handler ran%s: SIGINT raised KeyboardInterrupt; %s" % (seen, install)
        if not (getattr(result, "timed_out", False) or getattr(result, "killed", False)):
            return ("no handler ran%s: Python's default SIGINT handler raised KeyboardInterrupt and the node ended "
                    "the run as a failure; %s" % (seen, install))
        return "no handler ran%s: SIGINT is ignored; %s" % (seen, install)
    if getattr(result, "is_pid1", False):
        return "no handler ran%s: %s (as PID 1 the kernel drops the signal otherwise)" % (seen, install)
    return ("no handler ran%s: %s is ignored or its handler does nothing; %s, one that starts the stop"
            % (seen, name, install))
