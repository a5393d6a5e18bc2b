"""The usage error repeats the command line it refused, so a secret pasted into argv reaches the logs."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        say("%s: the command line is not one this node answers (see --help)" % SESSION_DISPATCH_ARGUMENTS_INVALID)\n',
    '        say("%s: the command line %r is not one this node answers (see --help)"\n'
    '            % (SESSION_DISPATCH_ARGUMENTS_INVALID, " ".join(tokens)))\n',
)]
KILLS = ["argv.usage"]
