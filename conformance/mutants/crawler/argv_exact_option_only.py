"""Only the exact option is taken, once, and --help only alone (the pre-issue-20 D1): the upstream's argparse forms are usage errors."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    parser = _ArgumentParser(prog=PROGRAM, add_help=True, allow_abbrev=True)\n',
    '    if tokens in (["-h"], ["--help"]):\n'
    '        return None\n'
    '    if len(tokens) == 2 and tokens[0] == OPTION and not tokens[1].startswith("-"):\n'
    '        return tokens[1]\n'
    '    if len(tokens) == 1 and tokens[0].startswith(OPTION + "="):\n'
    '        return tokens[0][len(OPTION) + 1:]\n'
    '    raise UsageError(None, USAGE, EXIT_USAGE)\n'
    '    parser = _ArgumentParser(prog=PROGRAM, add_help=True, allow_abbrev=True)\n',
)]
KILLS = ["peer.argv-abbreviated", "peer.argv-repeated", "peer.argv-help-anywhere"]
