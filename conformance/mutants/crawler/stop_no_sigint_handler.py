"""Only SIGTERM gets the stop handler; SIGINT keeps Python's default and raises KeyboardInterrupt mid-fetch."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    install_handlers(on_signal, signals=STATUS_SIGNALS)  # SIGINT too: Ctrl-C is a stop, never a traceback\n',
    '    install_handlers(on_signal, signals=(signal.SIGTERM, signal.SIGALRM))\n',
)]
KILLS = ["stop.sigint"]
