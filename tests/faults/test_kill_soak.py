"""The fault-injection soak (ops/bench/kill_soak.py) in the suite: 120 seeded iterations (the bench runs more) of
kill -9 (writes, one-shot syncs, the agent) under logger faults, then every check."""

from __future__ import annotations

import pytest

from ops.bench.kill_soak import passed, soak


@pytest.mark.slow
def test_kill_9_anywhere_under_logger_faults_loses_and_duplicates_nothing(fleet_factory,
                                                                         tmp_path):
    fleet = fleet_factory()
    report = soak(fleet, tmp_path, iterations=120, seed=20261203)
    assert passed(report), report
    counts = report["iterations_counts"]
    assert counts["writes_killed"] and counts["agents_killed"] and counts["syncs_killed"]
    assert report["writes_succeeded"] > 30 and report["lost"] == report["duplicated"] == 0
