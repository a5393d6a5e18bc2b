"""The failure bundle's PUT is best effort like :fail: a refused bundle is still reported "reported", exit 0."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        except Exception:\n'
    '            delivered = False\n',
    '        except Exception:\n'
    '            delivered = True  # best effort, like :fail\n',
)]
KILLS = ["report.bundle-refused"]
