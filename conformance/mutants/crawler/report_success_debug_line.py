"""A successful run says so on stderr ("result stored"), a friendly last line the contract forbids: success is silent."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        return Outcome(STORED, None)  # CRAWLER-REPORT-3: success is silent, even after a stop (STOP-4)\n',
    '        write_all(2, b"crawler_job.py: result stored\\n")\n'
    '        return Outcome(STORED, None)\n',
)]
KILLS = ["report.success"]
