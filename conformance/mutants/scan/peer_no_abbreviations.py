"""The upstream's abbreviations are not written out: `--serv`, `--tok` and `--p` are usage errors (allow_abbrev=False alone)."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    ('    argv = upstream_spelling(tokens, parser._option_string_actions)  # D28: `--tok` is `--token`, as upstream\n',
     '    argv = tokens\n'),
]
KILLS = ['peer.launch-line']
