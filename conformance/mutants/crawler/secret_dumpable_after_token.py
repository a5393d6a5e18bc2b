"""Dumpability is disabled once the first identity token has arrived, not before it is asked for."""
NODE = "nodes/crawler_job.py"
REPLACE = [
    ('    disable_dumpability()  # CRAWLER-SECRET-1: right after the bucket, before any secret exists\n', ''),
    ('            token, length = mint_identity_token(config, audience)  # CRAWLER-IDENTITY-2: minted just before the call\n',
     '            token, length = mint_identity_token(config, audience)\n'
     '            disable_dumpability()  # now there is a secret to protect\n'),
]
KILLS = ["secret.dumpable"]
