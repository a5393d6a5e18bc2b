"""The upstream's abbreviations are not written out: `--serv`, `--tok` and `--p` are usage errors (allow_abbrev=False alone)."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    ('    argv = upstream_spelling(argv, parser._option_string_actions)  # D28: `--tok` is `--token`, as upstream\n',
     ''),
]
KILLS = ['peer.launch-line']
