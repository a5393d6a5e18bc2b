"""A relative Location is resolved against the site's root instead of the hop's URL, so "../b/hop2" lands on the wrong path."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "source = check_source_url(urllib.parse.urljoin(source.url, location), policy)",
    "source = check_source_url(urllib.parse.urljoin(\"https://%s:%d/\" % (source.host, source.port), location), policy)",
)]
KILLS = ["fetch.redirect-followed"]
