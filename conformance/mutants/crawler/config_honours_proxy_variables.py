"""Connections go through the proxy HTTP_PROXY / HTTPS_PROXY name when one is set, as urllib and most clients do, instead of always direct (CONFIG-8)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        self.sock = open_socket(self.target, self.stop, deadline, context, proxy=self.proxy)\n',
    '        proxy = self.proxy or Proxies.from_environ(os.environ).pick(self.target)  # honour the platform\'s proxy\n'
    '        self.sock = open_socket(self.target, self.stop, deadline, context, proxy=proxy)\n',
)]
KILLS = ["config.no-proxy"]
