"""An upload is bounded as a whole by --http-timeout, like a JSON exchange (the contract before D27): a large bundle on a slow link is cut and retried for ever."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                session.open()  # D27: the connect deadline is budget_s, as for any request\n'
    '                conn = session.conn\n'
    '                self._head(conn, method, path, token)\n'
    '                upload(conn)  # SCAN-UPLOAD-1: its own headers, then the body, each piece within budget_s\n',
    '                with Watchdog(budget, lambda: shut(session.sock)):\n'
    '                    session.open()\n'
    '                    conn = session.conn\n'
    '                    self._head(conn, method, path, token)\n'
    '                    upload(conn)\n',
)]
KILLS = ["http.upload-moving"]
