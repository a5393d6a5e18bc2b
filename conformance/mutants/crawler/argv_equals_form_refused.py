"""Only the two-token form `--crawler-session-id VALUE` is parsed; the one-token `--crawler-session-id=VALUE` is a usage error."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    if len(tokens) == 1 and tokens[0].startswith(OPTION + "="):\n'
    '        return RUN, tokens[0][len(OPTION) + 1:]\n',
    '',
)]
KILLS = ["argv.equals-form"]
