"""Job mode's flags are matched by name in any order (as argparse would), not as six cells in one order."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    if len(tokens) == 6 and tuple(tokens[0::2]) == JOB_FLAGS and all(tokens[1::2]):\n'
    '        return JOB, Dispatch(*tokens[1::2])\n',
    '    pairs = dict(zip(tokens[0::2], tokens[1::2]))\n'
    '    if len(tokens) == 6 and set(pairs) == set(JOB_FLAGS) and all(tokens[1::2]):\n'
    '        return JOB, Dispatch(*[pairs[flag] for flag in JOB_FLAGS])\n',
)]
KILLS = ["argv.usage"]
