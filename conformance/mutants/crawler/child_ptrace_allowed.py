"""The seccomp filter's denied list forgets ptrace (101), a table a real node transcribes by hand."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '                101,  # ptrace\n',
    '',
)]
KILLS = ["child.sandbox-syscalls"]
