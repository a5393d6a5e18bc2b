"""next_watermark is not checked to be null (only the receipt's Reader fields are)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    require(result["next_watermark"] is None)  # CRAWLER-RESULT-9: one-shot: no watermark for a next run to trust\n',
    '',
)]
KILLS = ["result.reader-watermark"]
