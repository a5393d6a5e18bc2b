"""Any 2xx from the metadata server is taken as a token answer, not only 200."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "            response = conn.getresponse()\n"
    "            if response.status != 200:  # CRAWLER-IDENTITY-3: a redirect is never followed\n",
    "            response = conn.getresponse()\n"
    "            if not 200 <= response.status < 300:  # a success\n",
)]
KILLS = ["identity.malformed"]
