"""read_body() takes an answer without a Content-Length as cut short: the metadata server's chunked identity answer, which urllib reads upstream, fails the run."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        declared is None and budget.expired())\n',
    '        declared is None)\n',
)]
KILLS = ["peer.chunked-answers"]
