"""The :fail exchange relies on a per-read socket timeout, without the watchdog that makes the bootstrap timeout one elapsed deadline (D9)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        with http_exchange("%s/%s:fail" % (config.url_base, config.session_id), budget) as session:\n',
    '        with contextlib.closing(HttpExchange("%s/%s:fail" % (config.url_base, config.session_id), STOP,\n'
    '                                             timeout_s=budget.seconds, connect_deadline_s=budget.seconds,\n'
    '                                             ssl_context_factory=tls_context).open()) as session:\n',
)]
KILLS = ["fail.best-effort"]
