"""Every exchange closes its connection when it ends: an idle worker pays a TCP connect and a TLS handshake per poll."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                            session.keep(response)\n'
    '                            return Answer(response.status, headers, data)\n',
    '                            return Answer(response.status, headers, data)\n',
)]
KILLS = ["http.keep-alive"]
