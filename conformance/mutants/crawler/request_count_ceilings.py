"""max_rows and max_columns keep the version-3 ceilings (10^8, 4096), so a request asking for more rows or columns than a guess is refused (D27)."""
NODE = "nodes/crawler_job.py"
REPLACE = [
    ('        ("max_rows", 0, MAX_SAFE_INTEGER),\n', '        ("max_rows", 0, 100000000),\n'),
    ('        ("max_columns", 1, MAX_SAFE_INTEGER),\n', '        ("max_columns", 1, 4096),\n'),
]
KILLS = ["boot.strict-request"]
