"""max_rows is checked with >=, so a source with exactly max_rows rows is refused."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        if row_count > limits["max_rows"]:\n',
    '        if row_count >= limits["max_rows"]:\n',
)]
KILLS = ["norm.limits"]
