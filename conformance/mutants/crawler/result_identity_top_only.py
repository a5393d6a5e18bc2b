"""The request's identity is checked at the top of the result only, not restated in the receipt."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    for document in (result, receipt):  # CRAWLER-RESULT-3: else a result could be filed under another request or source\n',
    '    for document in (result,):\n',
)]
KILLS = ["result.identity"]
