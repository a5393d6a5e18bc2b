"""The signed query is decoded into its fields and rebuilt with urllib.parse.quote (whose default keeps '/' unescaped), instead of being sent byte for byte."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    request_target = capability.path + "?" + capability.query  # CRAWLER-UPLOAD-1: byte for byte as received\n',
    '    request_target = capability.path + "?" + "&".join(\n'
    '        "%s=%s" % (name, urllib.parse.quote(value)) for name, value in strict_query_pairs(capability.query))\n',
)]
KILLS = ["upload.wire"]
