"""Connections go to the host named by HTTP_PROXY / HTTPS_PROXY when one is set, as urllib and most clients do, instead of always direct (CONFIG-8)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    'import urllib.parse\n',
    'import urllib.parse\nimport urllib.request\n',
), (
    '        self.sock = open_socket(self.target, self.stop, deadline, context)\n',
    '        proxy = urllib.request.getproxies().get(self.target.scheme)  # honour the platform\'s proxy\n'
    '        self.sock = open_socket(split_url(proxy) if proxy else self.target, self.stop, deadline, context)\n',
)]
KILLS = ["config.no-proxy"]
