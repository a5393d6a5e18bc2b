"""The chain is verified but the name is not ("the certificate is signed, that is enough"): any
certificate a trusted CA issued, for any host, is taken for the broker, the source or the store."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "    return ssl.create_default_context()\n",
    "    context = ssl.create_default_context()\n"
    "    context.check_hostname = False\n"
    "    return context\n",
)]
KILLS = ["boot.tls-hostname", "fetch.tls-hostname", "upload.tls-hostname"]
