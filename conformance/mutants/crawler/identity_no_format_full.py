"""The metadata request asks for the token without format=full (the default format also returns a JWT), though IDENTITY-1 fixes the query."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    'query = urllib.parse.urlencode((("audience", audience), ("format", "full")))',
    'query = urllib.parse.urlencode((("audience", audience),))',
)]
KILLS = ["identity.request-shape"]
