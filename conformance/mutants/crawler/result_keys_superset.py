"""The result's top-level keys are checked to include the required ones; extra keys are let through."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    require(isinstance(result, dict) and set(result) == RESULT_KEYS)  # CRAWLER-RESULT-2: no key is stored unchecked\n',
    '    require(isinstance(result, dict) and set(result) >= RESULT_KEYS)\n',
)]
KILLS = ["result.keys"]
