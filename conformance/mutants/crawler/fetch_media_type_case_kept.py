"""The media type is the Content-Type with its parameters removed but its case kept ("Text/CSV"), not lowercased."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        media_type = media_type.split(";", 1)[0].strip().lower()  # the media type: parameters removed\n',
    '        media_type = media_type.split(";", 1)[0].strip()\n',
)]
KILLS = ["fetch.evidence"]
