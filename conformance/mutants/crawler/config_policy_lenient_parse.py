"""The egress policy variable is parsed with the lenient parser (any JSON layout), not as canonical JSON, so a pretty-printed policy is taken."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        document = parse_canonical(data)\n'
    '    except (UnicodeEncodeError, JsonError):\n',
    '        document = parse_lenient(data)  # any JSON layout will do\n'
    '    except (UnicodeEncodeError, JsonError):\n',
)]
KILLS = ["config.policy"]
