"""The slot cap is 64 (a thread budget guessed too low), so the contract's 128 is refused."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    'MIN_PARALLELISM, MAX_PARALLELISM = 1, 128',
    'MIN_PARALLELISM, MAX_PARALLELISM = 1, 64',
)]
KILLS = ["argv.parallelism"]
