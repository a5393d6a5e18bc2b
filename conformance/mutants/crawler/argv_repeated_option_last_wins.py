"""A repeated option is accepted the argparse way, the last value winning, instead of being a usage error (D1)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    if len(tokens) == 2 and tokens[0] == OPTION and not tokens[1].startswith("-"):\n'
    '        return RUN, tokens[1]\n',
    '    if len(tokens) >= 2 and len(tokens) % 2 == 0 and tokens[::2] == [OPTION] * (len(tokens) // 2) \\\n'
    '            and not any(t.startswith("-") for t in tokens[1::2]):\n'
    '        return RUN, tokens[-1]  # the option given again: the last one wins, as with argparse\n',
)]
KILLS = ["argv.usage-no-echo"]
