"""A timeout variable is read with float() alone, so ' 5', '5.', '.5', '+5' and '1_0' are accepted as seconds (CONFIG-6 wants [0-9]+(.[0-9]+)?)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        if not _TIMEOUT_RE.fullmatch(text):  # CRAWLER-CONFIG-6: decimal seconds, nothing else\n'
    '            return None\n'
    '        seconds = float(text)\n',
    '        try:\n'
    '            seconds = float(text)\n'
    '        except ValueError:\n'
    '            return None\n',
)]
KILLS = ["config.timeouts"]
