"""The two bootstrap bases are read and checked before the session id (all the environment first), so a bad base hides a bad argument (CONFIG-7)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    if not is_canonical_uuid(session_id):  # CRAWLER-ARGV-2: pasted into every route: only the one UUID spelling\n'
    '        raise CrawlerError(CRAWLER_JOB_ARGUMENT_INVALID, "the session id is not a canonical UUID")\n'
    '    audience_base = check_base(environ.get(AUDIENCE_BASE_ENV))  # CRAWLER-CONFIG-2: the audience base first\n'
    '    if audience_base is None:\n'
    '        raise invalid("the audience base")\n'
    '    url_base = check_base(environ.get(URL_BASE_ENV))  # CRAWLER-CONFIG-2: then the URL base\n'
    '    if url_base is None:\n'
    '        raise invalid("the URL base")\n',
    '    audience_base = check_base(environ.get(AUDIENCE_BASE_ENV))\n'
    '    if audience_base is None:\n'
    '        raise invalid("the audience base")\n'
    '    url_base = check_base(environ.get(URL_BASE_ENV))\n'
    '    if url_base is None:\n'
    '        raise invalid("the URL base")\n'
    '    if not is_canonical_uuid(session_id):  # the argument once the bases are known\n'
    '        raise CrawlerError(CRAWLER_JOB_ARGUMENT_INVALID, "the session id is not a canonical UUID")\n',
)]
KILLS = ["config.session-before-bases"]
