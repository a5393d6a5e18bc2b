"""A plain-HTTP request goes to the proxy with the origin-form target (/path?query), as to an origin: the proxy cannot tell where to send it."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    '            self.target = self.target._replace(request_target="http://" + origin + self.target.request_target)\n',
    '            pass\n',
)]
KILLS = ["proxy.forward"]
