"""Each hop also sends "Accept: */*", as most HTTP clients do, beyond the four headers the contract allows."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "            conn.putheader(\"Accept-Encoding\", \"identity\")  # CRAWLER-FETCH-4: else a gzip answer, refused by FETCH-6\n"
    "            conn.putheader(\"Connection\", \"close\")  # CRAWLER-FETCH-4: and nothing else, no credential ever\n",
    "            conn.putheader(\"Accept-Encoding\", \"identity\")  # CRAWLER-FETCH-4: else a gzip answer, refused by FETCH-6\n"
    "            conn.putheader(\"Connection\", \"close\")\n"
    "            conn.putheader(\"Accept\", \"*/*\")\n",
)]
KILLS = ["fetch.plain-request"]
