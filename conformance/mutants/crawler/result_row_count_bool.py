"""row_count is checked with isinstance(rows, int), so JSON true passes as the integer 1."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    require(is_int(rows) and 0 <= rows <= limits["max_rows"])  # CRAWLER-RESULT-7: an integer, not true\n',
    '    require(isinstance(rows, int) and 0 <= rows <= limits["max_rows"])\n',
)]
KILLS = ["result.limits"]
