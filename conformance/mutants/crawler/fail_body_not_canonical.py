"""The :fail body is written with json.dumps (a space after the colon) instead of as canonical JSON (FAIL-1)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        body = canonical_bytes({"failure_code": code})  # CRAWLER-FAIL-1: the code and nothing else\n',
    '        body = json.dumps({"failure_code": code}).encode("utf-8")\n',
)]
KILLS = ["fail.shape"]
