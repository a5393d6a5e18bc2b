"""The :redeem exchange relies on a socket timeout (per read) of the bootstrap timeout, without the watchdog that makes it one elapsed deadline (D9)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        with http_exchange(url, budget) as session:\n'
    '            conn = session.conn\n'
    '            conn.putrequest("POST", session.target.request_target, skip_accept_encoding=True)\n'
    '            conn.putheader("Accept", "application/json")  # CRAWLER-BOOT-1: asks for the JSON the parser expects\n',
    '        with contextlib.closing(HttpExchange(url, STOP, timeout_s=budget.seconds, connect_deadline_s=budget.seconds,\n'
    '                                             ssl_context_factory=tls_context).open()) as session:\n'
    '            conn = session.conn\n'
    '            conn.putrequest("POST", session.target.request_target, skip_accept_encoding=True)\n'
    '            conn.putheader("Accept", "application/json")  # CRAWLER-BOOT-1: asks for the JSON the parser expects\n',
)]
KILLS = ["boot.deadline"]
