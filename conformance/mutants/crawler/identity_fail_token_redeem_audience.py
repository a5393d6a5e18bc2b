"""The :fail report's token is minted for the :redeem audience (copied from the bootstrap code), not for <audience base>/<sid>:fail."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        audience = "%s/%s:fail" % (config.audience_base, config.session_id)\n',
    '        audience = "%s/%s:redeem" % (config.audience_base, config.session_id)\n',
)]
KILLS = ["identity.fresh-per-call", "fail.shape"]
