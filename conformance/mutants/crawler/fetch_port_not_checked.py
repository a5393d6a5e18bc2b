"""The source URL's host is checked against allowed_hosts but its port is never checked against allowed_ports."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    if port not in policy.ports:  # CRAWLER-FETCH-2: a listed host on an unlisted port is another service\n'
    "        return None\n",
    "",
)]
KILLS = ["fetch.url-invalid"]
