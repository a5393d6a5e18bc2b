"""Certificates are not verified ("it is our own infrastructure"): the token, the signed URL and the
source's bytes go to whoever answers the connection."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "    return ssl.create_default_context()\n",
    "    context = ssl.create_default_context()\n"
    "    context.check_hostname = False\n"
    "    context.verify_mode = ssl.CERT_NONE\n"
    "    return context\n",
)]
KILLS = ["boot.tls-verified", "fetch.tls-verified", "upload.tls-verified"]
