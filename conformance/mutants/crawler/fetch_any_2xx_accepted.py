"""Any 2xx final status is taken as success (206 Partial Content included), not 200 only."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "                continue\n"
    "            if response.status != 200:  # CRAWLER-FETCH-6: an error page is not the source\n",
    "                continue\n"
    "            if not 200 <= response.status < 300:\n",
)]
KILLS = ["fetch.status"]
