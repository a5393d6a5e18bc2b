"""A failing child's line is read with the lenient parser, so spaced or unsorted JSON still names its code."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        document = parse_canonical(line)\n    except JsonError:\n        return CRAWLER_CHILD_FAILED\n',
    '        document = parse_lenient(line)\n    except JsonError:\n        return CRAWLER_CHILD_FAILED\n',
)]
KILLS = ["child.refused-code"]
