"""Only the errors the author foresaw are caught: json's ValueError, the node's own errors. Nothing
bounds nesting, so a deep bootstrap raises RecursionError, which no handler expects, and the job
dies with a traceback and no status line (the upstream's behaviour, D15)."""
NODE = "nodes/crawler_job.py"
REPLACE = [
    ("                if depth > MAX_JSON_DEPTH:\n",
     "                if False:  # json copes with nesting\n"),
    ("    except Exception:  # RecursionError and MemoryError included: the parser's only error is its own\n",
     "    except ValueError:  # what json raises\n"),
    ("            except Exception:  # CRAWLER-REPORT-5: whatever the answer holds\n",
     "            except ValueError:  # a malformed answer\n"),
    ("            except Exception:  # CRAWLER-REPORT-5 (D15): unforeseen, still one status line\n",
     "            except ValueError:  # a malformed configuration or answer\n"),
    ("    except BaseException:  # CRAWLER-REPORT-5 (D15): a defect in this file still ends in one status line\n",
     "    except CrawlerError:  # the node's own errors\n"),
]
KILLS = ["report.no-traceback"]
