"""An upload that failed transiently is sent again once, even when the store may already hold it."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        try:\n"
    "            self.write_object(relpath, payload)\n"
    "        except BaseException as exc:\n",
    "        try:\n"
    "            try:\n"
    "                self.write_object(relpath, payload)\n"
    "            except Transient:\n"
    "                say(\"uploading %s failed; trying once more\" % relpath)\n"
    "                self.write_object(relpath, payload)\n"
    "        except BaseException as exc:\n",
)]
KILLS = ["output.reset-mid-upload", "output.accept-then-reset", "fault.output.reset", "fault.result.reset",
         "fault.output.throttled", "fault.result.slowdown", "fault.result.throttled",
         "output.redirect-upload"]
