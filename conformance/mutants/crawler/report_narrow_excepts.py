"""Only the errors the author foresaw are caught: json's ValueError, the node's own errors. Nothing
bounds nesting, so a deep bootstrap raises RecursionError, which no handler expects, and the job
dies with a traceback and no status line (the upstream's behaviour, D15)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "                if depth > MAX_JSON_DEPTH:\n",
    "                if False:  # json copes with nesting\n",
), (
    "        canonical_bytes(value)  # a lone surrogate from a \\ud800 escape cannot be encoded\n"
    "    except Exception:  # RecursionError and MemoryError included: the parser's only error is its own\n",
    "        canonical_bytes(value)  # a lone surrogate from a \\ud800 escape cannot be encoded\n"
    "    except ValueError:  # what json raises\n",
), (
    "                raise\n"
    "            except Exception:  # CRAWLER-REPORT-5: whatever the answer holds\n"
    "                raise CrawlerError(CRAWLER_BOOTSTRAP_RESPONSE_INVALID, \"unforeseen shape\") from None\n",
    "                raise\n"
    "            except ValueError:  # a malformed answer\n"
    "                raise CrawlerError(CRAWLER_BOOTSTRAP_RESPONSE_INVALID, \"unforeseen shape\") from None\n",
), (
    "                return self.end_before_capability(exc.code)\n"
    "            except Exception:  # CRAWLER-REPORT-5 (D15): unforeseen, still one status line\n",
    "                return self.end_before_capability(exc.code)\n"
    "            except ValueError:  # a malformed configuration or answer\n",
), (
    "        outcome = lifecycle(config)\n"
    "    except BaseException as exc:  # a defect in this file still ends in the final line, never a traceback\n",
    "        outcome = lifecycle(config)\n"
    "    except CrawlerError as exc:  # the node's own errors\n",
)]
KILLS = ["report.no-traceback"]
