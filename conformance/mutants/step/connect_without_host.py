"""CONNECT goes out with no Host header, as HTTP/1.0 clients send it; HTTP/1.1 requires one and some proxies refuse without it."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    '    head = "CONNECT %s HTTP/1.1\\r\\nHost: %s\\r\\n" % (authority, authority)\n',
    '    head = "CONNECT %s HTTP/1.1\\r\\n" % authority\n',
)]
KILLS = ["proxy.tunnel"]
