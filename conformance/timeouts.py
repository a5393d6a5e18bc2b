"""Every wait in the harness is bounded by one of these named timeouts.

A bare number of seconds in a check or a plane is a bug: pick the constant
whose sentence matches the wait, so that a slow, shared machine can be
accommodated by changing one line here. Timing *assertions* about the node
(stop latency, deadlines) are contract numbers and live with the checks that
cite their clauses; these constants only bound how long the harness waits.
"""

# Use for a step that should be near-instant on an idle machine but may be
# slowed by a loaded one: a process starting up, `--help`, an import probe,
# a line the node prints right after an action, a server answering on
# loopback.
SHORT_TIMEOUT_S = 10.0

# Use for one whole node run in a check (start to exit), when the run moves
# small objects; the harness kills the node after it and keeps the logs.
NODE_RUN_TIMEOUT_S = 60.0

# Use for a run that moves large objects (hundreds of MiB) or is deliberately
# slow, and for waiting on a whole conformance run in a subprocess.
LONG_TIMEOUT_S = 300.0

# Use after SIGKILL: how long to wait for the kernel to reap a killed
# process. A process still there after this is a harness fault (ERROR).
REAP_TIMEOUT_S = 5.0

# Use as the interval of every polling loop (waiting for a child pid to
# appear, sampling /proc, re-checking a condition without an event).
POLL_INTERVAL_S = 0.005

# Use as the interval at which the runner samples the command lines of the
# node's descendants (secret hygiene: no credential in any argv). A child
# that lives for less than this may go unseen.
PROC_SAMPLE_INTERVAL_S = 0.05
