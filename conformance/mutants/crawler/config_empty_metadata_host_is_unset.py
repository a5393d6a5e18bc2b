"""An empty GCE_METADATA_HOST is treated as unset (the default address is used), though CONFIG-4 says a set variable is judged, empty or not."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    if metadata_host is None:\n'
    "        metadata_host = DEFAULT_METADATA_HOST  # CRAWLER-CONFIG-4: unset is the platform's server, not an error\n",
    '    if not metadata_host:\n'
    '        metadata_host = DEFAULT_METADATA_HOST  # unset or empty: the platform default\n',
)]
KILLS = ["config.endpoints"]
