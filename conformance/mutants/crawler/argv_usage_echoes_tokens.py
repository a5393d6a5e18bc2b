"""The usage error names what was wrong by repeating the command line's tokens (as argparse does), so a mistyped credential lands in the logs (D1)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        write_all(2, USAGE.encode("ascii"))  # CRAWLER-ARGV-1 (D1): a fixed text, no token of the command line\n',
    '        write_all(2, (USAGE + "%s: error: unrecognized arguments: %s\\n" % (PROGRAM, " ".join(tokens)))\n'
    '                  .encode("utf-8", "replace"))  # say what was wrong\n',
)]
KILLS = ["argv.usage-no-echo"]
