"""The usage error repeats the command line it refused, so a secret pasted into argv reaches the logs."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        raise UsageError(SESSION_DISPATCH_ARGUMENTS_INVALID, ARGV_REFUSED)\n',
    '        raise UsageError(SESSION_DISPATCH_ARGUMENTS_INVALID, "the command line %r is not one this node answers"\n'
    '                         % " ".join(tokens))\n',
)]
KILLS = ["argv.usage"]
