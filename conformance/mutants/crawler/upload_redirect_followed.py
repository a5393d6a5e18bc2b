"""A 3xx answering a PUT is followed to its Location with the same PUT, as an HTTP client library would."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            if response.status not in (200, 201):  # CRAWLER-UPLOAD-3: a 3xx is never followed\n',
    '            location = response.getheader("Location")\n'
    '            if response.status in REDIRECT_STATUSES and location:  # the object moved: PUT it there\n'
    '                moved = urllib.parse.urlsplit(urllib.parse.urljoin(config.storage_origin + request_target, location))\n'
    '                return put_object(config._replace(storage_origin="%s://%s" % (moved.scheme, moved.netloc)),\n'
    '                                  capability._replace(path=moved.path, query=moved.query), body, size)\n'
    '            if response.status not in (200, 201):\n',
)]
KILLS = ["upload.redirect"]
