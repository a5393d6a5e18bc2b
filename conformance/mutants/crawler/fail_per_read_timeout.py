"""The :fail exchange relies on a per-read socket timeout, without the watchdog that makes the bootstrap timeout one elapsed deadline (D9)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        with http_exchange("%s/%s:fail" % (config.url_base, config.session_id), budget) as session:\n',
    '        with HttpExchange("%s/%s:fail" % (config.url_base, config.session_id), STOP, timeout_s=budget.seconds,\n'
    '                          connect_deadline_s=budget.seconds, ssl_context_factory=tls_context) as session:\n',
)]
KILLS = ["fail.best-effort"]
