"""A failure through the proxy names the proxy's user and password, and the redaction was never told they are secrets."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    SECRETS.update(proxies.secrets())  # STEP-PROXY-5: else a message quoting them would publish them\n",
    "",
), (
    "    return Transient(\"%s: %s\" % (what, describe(exc)))  # STEP-HTTP-3: DNS, connect, reset, timeout\n",
    "    return Transient(\"%s: %s (proxy credentials %s)\" % (what, describe(exc), PROXIES[0].secrets()[:2]))\n",
)]
KILLS = ["proxy.credentials"]
