"""row_count is held to 0 and up but not to the request's max_rows (the child is trusted to have applied the limit)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    require(is_int(rows) and 0 <= rows <= limits["max_rows"])  # CRAWLER-RESULT-7: an integer, not true\n',
    '    require(is_int(rows) and 0 <= rows)\n',
)]
KILLS = ["result.limits"]
