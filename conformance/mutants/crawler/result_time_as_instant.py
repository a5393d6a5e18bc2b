"""acquired_at and observed_at are compared with requested_at as parsed instants, so another spelling of the same time passes."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    require(same(receipt["acquired_at"], request["requested_at"])\n'
    '            and same(observation["observed_at"], request["requested_at"]))  # CRAWLER-RESULT-6: same input, same bytes\n',
    '    requested = parse_timestamp(request["requested_at"])\n    require(parse_timestamp(receipt["acquired_at"]) == requested\n            and parse_timestamp(observation["observed_at"]) == requested)\n',
)]
KILLS = ["result.time"]
