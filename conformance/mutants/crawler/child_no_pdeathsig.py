"""The child never sets PR_SET_PDEATHSIG, so a node killed by SIGKILL leaves its normaliser running."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        if self.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:  # CRAWLER-CHILD-3: dies with the node\n            raise OSError("PR_SET_PDEATHSIG")\n',
    '',
)]
KILLS = ["child.pdeathsig"]
