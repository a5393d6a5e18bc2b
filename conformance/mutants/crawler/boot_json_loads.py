"""The bootstrap is parsed with json.loads, which takes duplicate keys (the last wins) and other input the lenient parser refuses (BOOT-4)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            document = parse_lenient(view[:count])  # CRAWLER-BOOT-4: the lenient parser\n',
    '            document = json.loads(bytes(view[:count]))\n',
)]
KILLS = ["boot.strict-response"]
