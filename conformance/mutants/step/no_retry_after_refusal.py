"""An expired-looking refusal ends the run at once: the envelope is never re-read to retry with a rotated one."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        except Expired:\n"
    "            fresh = self.creds.get(force=True)  # STEP-CREDS-4: a refusal forces a re-read\n"
    "            if fresh == used:  # STEP-CREDS-4: by value; every re-read builds a new object\n"
    "                raise\n"
    "            say(\"%s was refused as expired; retrying once with the rotated credentials\" % what)\n"
    "            return operation(fresh)  # STEP-CREDS-4: once; a second refusal ends the run\n",
    "        except Expired:\n"
    "            raise\n",
)]
KILLS = ["creds.retry-after-rotation", "http.unauthorized-rotated", "fault.manifest.expired-rotated",
         "fault.output.expired-rotated", "fault.result.expired-rotated", "fault.marker.expired-rotated",
         "creds.at-most-one-retry"]
