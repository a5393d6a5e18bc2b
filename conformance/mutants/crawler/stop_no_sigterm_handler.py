"""No SIGTERM handler is installed (the default action is relied on), and as PID 1 the kernel drops the signal."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    install_handlers(on_signal, signals=STATUS_SIGNALS)  # SIGINT too: Ctrl-C is a stop, never a traceback\n',
    '    install_handlers(on_signal, signals=(signal.SIGINT, signal.SIGALRM))\n',
)]
KILLS = ["stop.identity", "stop.redeem", "stop.fetch", "stop.fetch-connect", "stop.fetch-tls", "stop.child"]
