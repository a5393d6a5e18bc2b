"""The :redeem call also sends its token in X-Serverless-Authorization (Cloud Run's alternative header), a second place for the token."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            conn.putheader("Authorization", authorization)  # CRAWLER-SECRET-2: the only place the token goes\n',
    '            conn.putheader("Authorization", authorization)\n'
    '            conn.putheader("X-Serverless-Authorization", authorization)  # for Cloud Run\'s own check\n',
)]
KILLS = ["secret.confinement"]
