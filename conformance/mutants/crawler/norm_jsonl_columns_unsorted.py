"""JSON-lines columns keep the first object's key order instead of being sorted."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "            columns = sorted(record)  # CRAWLER-NORM-1: the first object's keys, sorted\n",
    '            columns = list(record)\n',
)]
KILLS = ["norm.jsonl"]
