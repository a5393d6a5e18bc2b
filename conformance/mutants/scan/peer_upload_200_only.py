"""Only 200 is a receipt for an upload: a server that answers 201 Created gets the same upload again and again."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    ('upload=send, accept=(200, 201),',
     'upload=send, accept=(200,),'),
]
KILLS = ['peer.upload-201']
