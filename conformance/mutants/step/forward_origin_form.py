"""A plain-HTTP request goes to the proxy with the origin-form target (/path?query), as to an origin: the proxy cannot tell where to send it."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    '        return target._replace(request_target="http://" + origin + target.request_target)\n',
    '        return target\n',
)]
KILLS = ["proxy.forward"]
