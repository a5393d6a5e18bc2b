"""The abbreviations are written out for parsing only: the move off argv looks for `--token` and leaves `--tok TOKEN` and `--t=TOKEN` on the running worker's cmdline."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    ('    argv = upstream_spelling(tokens, parser._option_string_actions)  # D28: `--tok` is `--token`, as upstream\n'
     '    try:\n        args = parser.parse_args(argv)\n',
     '    argv = tokens\n'
     '    try:\n        args = parser.parse_args(upstream_spelling(argv, parser._option_string_actions))\n'),
]
KILLS = ['peer.launch-line']
