"""The node connects through the proxy HTTPS_PROXY or HTTP_PROXY names, as urllib would."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    peer = target if proxy is None else proxy  # whom TCP connects to\n',
    '    ambient = os.environ.get("HTTPS_PROXY" if target.scheme == "https" else "HTTP_PROXY")\n'
    '    peer = split_url(ambient) if proxy is None and ambient else target if proxy is None else proxy\n',
)]
KILLS = ["config.no-proxy"]
