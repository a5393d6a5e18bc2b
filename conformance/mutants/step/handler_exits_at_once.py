"""The SIGTERM handler exits on the spot (os._exit(20)): prompt, but no receipt is ever written after a stop."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "                line = \"%s: stop requested (signal %d); finishing up\\n\" % (self.program, signum)\n"
    "                os.write(self.stderr_fd, line.encode(\"ascii\", \"replace\"))\n"
    "        except (OSError, ValueError):\n"
    "            pass\n",
    "                line = \"%s: stop requested (signal %d); finishing up\\n\" % (self.program, signum)\n"
    "                os.write(self.stderr_fd, line.encode(\"ascii\", \"replace\"))\n"
    "        except (OSError, ValueError):\n"
    "            pass\n"
    "        os._exit(EXIT_CANCELLED)\n",
)]
KILLS = ["stop.first-byte", "stop.sigint", "stop.mid-body", "stop.upload-body", "stop.upload-answer",
         "stop.connect", "stop.tls-handshake", "stop.only-marker-after", "stop.between-inputs",
         "stop.before-manifest", "stop.receipt-kept", "stop.ack-line", "stop.after-work", "exit.codes",
         "stop.pid1", "stream.scratch-used"]
