"""Connections go through the proxy HTTP_PROXY / HTTPS_PROXY name when one is set, as urllib and most clients do, instead of always direct (CONFIG-8)."""
NODE = "nodes/crawler_job.py"
# The node embeds no proxy code (the transport block only calls the methods of
# a proxy it is handed), so the mutant brings a small one, read as urllib reads
# the variables, and hands it to every exchange with the metadata server, the
# broker and the store.
REPLACE = [(
    '@contextlib.contextmanager\n'
    'def http_exchange(url, budget):\n',
    'class EnvProxy(collections.namedtuple("EnvProxy", "host port")):  # honour the platform\'s proxy\n'
    '    @staticmethod\n'
    '    def pick(target):\n'
    '        value = os.environ.get(target.scheme + "_proxy") or os.environ.get(target.scheme.upper() + "_PROXY")\n'
    '        if not value:\n'
    '            return None\n'
    '        parts = urllib.parse.urlsplit(value)\n'
    '        return EnvProxy(parts.hostname, parts.port or 80)\n'
    '\n'
    '    def tunnel(self, sock, target, stop, deadline):\n'
    '        sock.setblocking(True)\n'
    '        sock.sendall(("CONNECT %s:%d HTTP/1.1\\r\\nHost: %s:%d\\r\\n\\r\\n"\n'
    '                      % (target.host, target.port, target.host, target.port)).encode("ascii"))\n'
    '        reply = b""\n'
    '        while b"\\r\\n\\r\\n" not in reply:\n'
    '            data = sock.recv(1)\n'
    '            if not data:\n'
    '                raise ConnectionError("the proxy closed the connection")\n'
    '            reply += data\n'
    '        if reply[9:10] != b"2":\n'
    '            raise ConnectionError("the proxy refused CONNECT")\n'
    '        sock.setblocking(False)\n'
    '\n'
    '    def forward_target(self, target):\n'
    '        return target._replace(request_target="http://%s:%d%s" % (target.host, target.port,\n'
    '                                                                  target.request_target))\n'
    '\n'
    '    def forwarding_connection(self, target, timeout):\n'
    '        return http.client.HTTPConnection(target.host, target.port, timeout=timeout)\n'
    '\n'
    '\n'
    '@contextlib.contextmanager\n'
    'def http_exchange(url, budget):\n',
), (
    '                           connect_deadline_s=budget.remaining(), budget=budget, ssl_context_factory=tls_context)\n',
    '                           connect_deadline_s=budget.remaining(), budget=budget, ssl_context_factory=tls_context,\n'
    '                           proxies=EnvProxy)\n',
)]
KILLS = ["config.no-proxy"]
