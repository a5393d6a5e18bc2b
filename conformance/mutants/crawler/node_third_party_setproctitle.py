"""Imports setproctitle (when installed) to hide the session id from ps: a third-party module in a node that must run on a bare Python."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        sys.argv[1:] = [ARGV_REDACTED] * len(tokens)  # CRAWLER-ARGV-3: no later log prints it (cmdline still does)\n',
    '        sys.argv[1:] = [ARGV_REDACTED] * len(tokens)  # CRAWLER-ARGV-3: no later log prints it (cmdline still does)\n'
    '        try:\n'
    '            import setproctitle  # and out of ps, where the module is installed\n'
    '            setproctitle.setproctitle(PROGRAM)\n'
    '        except ImportError:\n'
    '            pass\n',
)]
KILLS = ["node.stdlib"]
