"""The :fail call's token is minted for the :redeem audience (one audience for the session), so it is presented on a route it was not minted for."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        audience = "%s/%s:fail" % (config.audience_base, config.session_id)\n',
    '        audience = "%s/%s:redeem" % (config.audience_base, config.session_id)\n',
)]
KILLS = ["secret.confinement"]
