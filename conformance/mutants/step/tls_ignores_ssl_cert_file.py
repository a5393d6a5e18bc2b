"""The TLS context trusts only the system CA directory, ignoring SSL_CERT_FILE."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        _TLS_CONTEXTS.append(ssl.create_default_context())\n",
    "        _TLS_CONTEXTS.append(ssl.create_default_context(capath=\"/etc/ssl/certs\"))\n",
)]
KILLS = ["input.tls", "stop.tls-handshake"]
