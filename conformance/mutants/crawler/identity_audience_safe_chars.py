"""The audience is urlencoded with safe="/:" (to keep the URL readable), so ':' and '/' are not percent-encoded as urlencode() writes them (IDENTITY-1)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    'query = urllib.parse.urlencode((("audience", audience), ("format", "full")))',
    'query = urllib.parse.urlencode((("audience", audience), ("format", "full")), safe="/:")',
)]
KILLS = ["identity.request-shape"]
