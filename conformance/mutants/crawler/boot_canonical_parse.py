"""The :redeem answer must be canonical JSON, so a broker whose JSON writer spaces, orders or escapes otherwise is refused."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            document = parse_lenient(view[:count])  # CRAWLER-BOOT-4: the lenient parser\n',
    '            document = parse_canonical(view[:count])\n',
)]
KILLS = ["peer.bootstrap-spelling"]
