"""An unusable proxy variable is reported with its value, password and all (the redaction only knows http(s) URLs and the envelope's secrets)."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        raise Permanent(str(exc)) from None  # STEP-PROXY-1: names the variable, never its value (a password)\n",
    "        raise Permanent(\"%s: %s\" % (exc, environ.get(\"https_proxy\") or environ.get(\"HTTPS_PROXY\"))) from None\n",
)]
KILLS = ["proxy.bad-variable"]
