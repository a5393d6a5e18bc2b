"""Certificates are not verified ("it is our own infrastructure"): the token, the signed URL and the
source's bytes go to whoever answers the connection."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "        PROCESS.tls = ssl.create_default_context()\n",
    "        PROCESS.tls = ssl.create_default_context()\n"
    "        PROCESS.tls.check_hostname = False\n"
    "        PROCESS.tls.verify_mode = ssl.CERT_NONE\n",
)]
KILLS = ["boot.tls-verified", "fetch.tls-verified", "upload.tls-verified"]
