"""JSON lines are read with plain json.loads, so duplicate keys (last wins) and integers beyond 2^53-1 are accepted."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            record = parse_lenient(line)\n        except JsonError:\n',
    '            record = json.loads(line)\n        except JsonError:\n',
)]
KILLS = ["norm.malformed"]
