"""The signed query is parsed with urllib.parse.parse_qsl, which skips empty fields, so "&&" passes CAP-6."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "        pairs = strict_query_pairs(query)  # CRAWLER-CAP-6\n",
    "        pairs = urllib.parse.parse_qsl(query)\n",
)]
KILLS = ["cap.query"]
