"""Connections go through the proxy the environment names (urllib's getproxies), as urllib would."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        return open_socket(self.target, self.stop, deadline, context, tls_session=session)\n',
    '        __import__("urllib.request")\n'
    '        _proxy = urllib.request.getproxies().get(self.target.scheme)\n'
    '        if _proxy:\n'
    '            _where = urllib.parse.urlsplit(_proxy)\n'
    '            _tunnel = http.client.HTTPConnection(_where.hostname, _where.port, timeout=self.timeout_s)\n'
    '            _tunnel.set_tunnel(self.target.host, self.target.port)\n'
    '            _tunnel.connect()\n'
    '            return context.wrap_socket(_tunnel.sock, server_hostname=self.target.host)\n'
    '        return open_socket(self.target, self.stop, deadline, context, tls_session=session)\n',
)]
KILLS = ["config.no-proxy"]
