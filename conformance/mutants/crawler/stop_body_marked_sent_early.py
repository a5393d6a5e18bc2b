"""The result PUT counts as sent once its headers are out, so a stop while the body is still going out no longer aborts it: the node waits out the grace instead."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            send_body(session.sock, body, size, whole_body_going_out)\n',
    '            whole_body_going_out()  # the request is out: from here, wait for the answer\n'
    '            send_body(session.sock, body, size, lambda: None)\n',
)]
KILLS = ["stop.put-body"]
