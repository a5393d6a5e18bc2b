"""single_use is compared with == True, so 1 (which Python calls equal to True) passes CAP-1."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    if capability["single_use"] is not True:  # CRAWLER-CAP-1: not 1, not "true"\n',
    '    if capability["single_use"] != True:\n',
)]
KILLS = ["cap.keys-constants"]
