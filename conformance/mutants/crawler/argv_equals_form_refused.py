"""Only the two-token form `--crawler-session-id VALUE` is parsed; the one-token `--crawler-session-id=VALUE` is a usage error."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    parser.add_argument(OPTION, dest="session_id", required=True)\n',
    '    parser.add_argument(OPTION, dest="session_id", required=True)\n'
    '    if any("=" in token for token in tokens):\n'
    '        raise UsageError(None, USAGE, EXIT_USAGE)  # one value, one token: no NAME=VALUE\n',
)]
KILLS = ["argv.equals-form"]
