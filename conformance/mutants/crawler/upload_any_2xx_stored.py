"""Any 2xx answer counts as stored (response.status // 100 == 2), so a 204 is taken for success."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            if response.status not in (200, 201):  # CRAWLER-UPLOAD-3: a 3xx is never followed\n',
    '            if response.status // 100 != 2:\n',
)]
KILLS = ["upload.refused"]
