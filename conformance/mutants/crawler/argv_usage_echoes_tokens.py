"""The usage error names what was wrong by repeating the command line's tokens (as argparse does), so a mistyped credential lands in the logs (D1)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "    def error(self, message):\n"
    "        raise UsageError(None, USAGE, EXIT_USAGE)  # CRAWLER-ARGV-1 (D1): argparse's message names the tokens it refused\n",
    "    def error(self, message):\n"
    "        raise UsageError(None, USAGE + \"%s: error: %s\\n\" % (PROGRAM, message), EXIT_USAGE)  # say what was wrong\n",
)]
KILLS = ["argv.usage-no-echo"]
