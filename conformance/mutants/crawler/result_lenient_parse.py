"""The child's result is read with the lenient parser: any JSON that means the same is accepted, not only canonical bytes."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        result = parse_canonical(data)  # CRAWLER-RESULT-1 (D11): any non-canonical byte is the same fault\n',
    '        result = parse_lenient(data)\n',
)]
KILLS = ["result.canonical"]
