"""A usage error exits 2, argparse's own status, which a supervisor reads as a forced stop (D12)."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '    exit_code = EXIT_USAGE\n',
    '    exit_code = 2\n',
)]
KILLS = ["argv.usage", "argv.parallelism"]
