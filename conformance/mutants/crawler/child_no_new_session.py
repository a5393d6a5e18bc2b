"""The child is started without start_new_session, so it shares the node's session and process group."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            start_new_session=True,  # CRAWLER-CHILD-3: its own session and process group, for killpg\n',
    '',
)]
KILLS = ["child.fds-session"]
