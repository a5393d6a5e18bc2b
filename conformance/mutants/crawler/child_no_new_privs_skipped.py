"""The child skips PR_SET_NO_NEW_PRIVS (root may install a seccomp filter without it), so a setuid program it ran would gain privileges."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        if self.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:  # CRAWLER-CHILD-4: unprivileged seccomp requires it\n'
    '            raise OSError("PR_SET_NO_NEW_PRIVS")\n',
    '',
)]
KILLS = ["child.sandbox"]
