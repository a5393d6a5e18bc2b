"""A usage error exits 2, argparse's own status, which a supervisor reads as a forced stop (D12)."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        usage_line(str(exc))  # SCAN-ARGV-1: names the option, never its value\n'
    '        return EXIT_USAGE\n',
    '        usage_line(str(exc))  # SCAN-ARGV-1: names the option, never its value\n'
    '        return 2\n',
)]
KILLS = ["argv.usage", "argv.parallelism"]
