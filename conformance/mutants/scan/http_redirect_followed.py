"""A 3xx is followed to its Location with the same method and Authorization, as a browser-minded client does."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                        conn.putheader("Authorization", "Bearer " + token)\n',
    '                        conn.putheader("Authorization", "Bearer " + token)\n'
    '                        conn.mutant_request = (method, token)\n',
), (
    '                        response = conn.getresponse()\n'
    '                        if response.status in accept and 200 <= response.status < 300:\n',
    '                        response = conn.getresponse()\n'
    '                        if response.status in (301, 302, 303, 307, 308) and response.getheader("Location"):\n'
    '                            method, token = conn.mutant_request\n'
    '                            moved = HttpExchange(response.getheader("Location"), STOP, timeout_s=5,\n'
    '                                                 connect_deadline_s=5, ssl_context_factory=tls_context).open()\n'
    '                            moved.conn.request(method, moved.target.request_target, body=b"{}",\n'
    '                                               headers={"Authorization": "Bearer " + token})\n'
    '                            response = moved.conn.getresponse()\n'
    '                        if response.status in accept and 200 <= response.status < 300:\n',
)]
KILLS = ["http.no-redirect"]
