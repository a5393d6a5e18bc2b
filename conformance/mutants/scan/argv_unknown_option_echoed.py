"""An unknown option's usage line repeats argparse's whole message, the option's value with it."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            raise UsageError("unrecognized arguments%s" % (": " + " ".join(names[:4]) if names else ""))\n',
    '            raise UsageError(message)\n',
)]
KILLS = ["argv.usage"]
