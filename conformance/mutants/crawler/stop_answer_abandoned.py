"""A stop abandons the result PUT's answer too, even once the whole body was sent: a stored result ends as CANCELLED instead of waiting for the answer."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            STOP.abandonable = False  # CRAWLER-STOP-4: the whole body is out: wait for the answer, within the grace\n',
    '            pass\n',
)]
KILLS = ["stop.put-answer", "stop.put-answer-lost"]
