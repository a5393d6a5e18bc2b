"""CONNECT carries a Host that names the host without its port, so the Host and the tunnel's target disagree."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    '    head = "CONNECT %s HTTP/1.1\\r\\nHost: %s\\r\\n" % (authority, authority)\n',
    '    head = "CONNECT %s HTTP/1.1\\r\\nHost: %s\\r\\n" % (authority, target.host)\n',
)]
KILLS = ["proxy.tunnel"]
