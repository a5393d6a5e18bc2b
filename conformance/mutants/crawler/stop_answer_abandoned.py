"""A stop abandons the result PUT's answer too, even once the whole body was sent: a stored result ends as CANCELLED instead of waiting for the answer."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "        def body_sent():\n"
    "            STOP.abandonable = False  # CRAWLER-STOP-4: the body's last piece is going out: wait for the answer\n",
    "        def body_sent():\n"
    "            pass\n",
)]
KILLS = ["stop.put-answer", "stop.put-answer-lost"]
