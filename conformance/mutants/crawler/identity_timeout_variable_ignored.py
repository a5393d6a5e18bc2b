"""The metadata exchange always uses the BOOTSTRAP_TIMEOUT_S constant, ignoring MOSTLYRIGHT_CRAWLER_BOOTSTRAP_TIMEOUT_S (CONFIG-6)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    url = "http://%s%s?%s" % (config.metadata_host, METADATA_IDENTITY_PATH, query)  # CRAWLER-IDENTITY-1: plain HTTP\n'
    '    budget = Deadline(config.timeouts.bootstrap)\n',
    '    url = "http://%s%s?%s" % (config.metadata_host, METADATA_IDENTITY_PATH, query)  # CRAWLER-IDENTITY-1: plain HTTP\n'
    '    budget = Deadline(BOOTSTRAP_TIMEOUT_S)  # the metadata server is local: the constant will do\n',
)]
KILLS = ["identity.deadline"]
