"""The signed query is parsed with urllib.parse.parse_qsl, which skips empty fields, so "&&" passes CAP-6."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        pairs = strict_query_pairs(query)  # CRAWLER-CAP-6: read as the store reads it: & only, no blank field\n',
    "        pairs = urllib.parse.parse_qsl(query)\n",
)]
KILLS = ["cap.query"]
