"""The metadata answer is read whole with response.read() and only then compared with the bound (a token is small, so why stream it)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            # CRAWLER-IDENTITY-4: at most the bound + 1 bytes: a flooding server cannot fill memory\n'
    '            buffer, count = read_body(response, MAX_METADATA_IDENTITY_TOKEN_BYTES, budget)\n',
    '            buffer = PROCESS.hold_secret(bytearray(response.read()))  # a token is small: take it whole\n'
    '            count = len(buffer)\n',
)]
KILLS = ["identity.oversize"]
