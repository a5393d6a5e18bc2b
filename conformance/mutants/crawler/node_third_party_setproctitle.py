"""Imports setproctitle (when installed) to hide the session id from ps: a third-party module in a node that must run on a bare Python."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        sys.argv[1:] = [ARGV_REDACTED] * len(tokens)  # CRAWLER-ARGV-3 (/proc/<pid>/cmdline keeps it: not a secret)\n',
    '        sys.argv[1:] = [ARGV_REDACTED] * len(tokens)  # CRAWLER-ARGV-3 (/proc/<pid>/cmdline keeps it: not a secret)\n'
    '        try:\n'
    '            import setproctitle  # and out of ps, where the module is installed\n'
    '            setproctitle.setproctitle(PROGRAM)\n'
    '        except ImportError:\n'
    '            pass\n',
)]
KILLS = ["node.stdlib"]
