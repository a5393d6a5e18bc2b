"""The metadata exchange relies on a socket timeout (per read) of the bootstrap timeout, without the watchdog that makes it one elapsed deadline (D9)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        with http_exchange(url, budget) as session:\n'
    '            conn = session.conn\n'
    '            conn.putrequest("GET", session.target.request_target, skip_accept_encoding=True)\n',
    '        with contextlib.closing(HttpExchange(url, STOP, timeout_s=budget.seconds,\n'
    '                                             connect_deadline_s=budget.seconds).open()) as session:\n'
    '            conn = session.conn\n'
    '            conn.putrequest("GET", session.target.request_target, skip_accept_encoding=True)\n',
)]
KILLS = ["identity.deadline"]
