"""The child inherits the node's RLIMIT_CORE (setrlimit(RLIMIT_CORE, (0, 0)) left out), so a crash could dump the source to a core file."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # CRAWLER-CHILD-4: no core file\n',
    '',
)]
KILLS = ["child.sandbox"]
