"""The node opens GOOGLE_APPLICATION_CREDENTIALS when it is set (a key file, if the platform mounted one), though CONFIG-8 says never to read ambient credentials."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    return Config(bucket, session_id, audience_base, url_base, execution, metadata_host, storage_origin,\n',
    '    credentials = environ.get("GOOGLE_APPLICATION_CREDENTIALS")\n'
    '    if credentials:  # a mounted key, when there is one, is checked to be readable at start-up\n'
    '        try:\n'
    '            with open(credentials, "rb") as handle:\n'
    '                handle.read(1)\n'
    '        except OSError:\n'
    '            pass\n'
    '    return Config(bucket, session_id, audience_base, url_base, execution, metadata_host, storage_origin,\n',
)]
KILLS = ["config.no-credentials"]
