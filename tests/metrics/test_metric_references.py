#!/usr/bin/env python3
"""The checker of metric_references.py catches what it is for: a metric, a label, a label
value the agent does not export, a grouping label no metric has, and an expression promtool
refuses. The exposition here is a small made-up scrape; the real one is checked by
tst_dashboard_metrics."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import metric_references as mr  # noqa: E402

SCRAPE = """# TYPE payonce_duplicates_total counter
payonce_duplicates_total{layer="none"} 0
payonce_duplicates_total{layer="token"} 3
payonce_breaker_state{name="gateway.wechat"} 0
"""


def dashboard(*exprs):
    return {"panels": [{"title": "p", "targets": [{"refId": "A", "expr": e} for e in exprs]}]}


NO_RULES = {"groups": []}


class MetricReferences(unittest.TestCase):
    def setUp(self):
        self.exported = mr.parse_exposition(SCRAPE)

    def problems(self, *exprs):
        return mr.check(self.exported, dashboard(*exprs), NO_RULES)[0]

    def test_exported_references_pass(self):
        self.assertEqual(self.problems(
            'sum by (layer) (rate(payonce_duplicates_total{instance=~"$instance",layer!~"none|token"}[$__rate_interval]))',
            'max by (instance, name) (payonce_breaker_state)'), [])

    def test_wrong_metric_name_fails(self):
        problems = self.problems('sum(rate(payonce_duplicate_total[5m]))')
        self.assertEqual(problems, ['dashboard panel "p" A: metric payonce_duplicate_total is not exported'])

    def test_wrong_label_fails(self):
        problems = self.problems('sum(rate(payonce_duplicates_total{layr="token"}[5m]))')
        self.assertIn('payonce_duplicates_total has no label layr', problems[0])

    def test_wrong_label_value_fails(self):
        self.assertIn('exports no layer="tokens"', self.problems('payonce_duplicates_total{layer="tokens"}')[0])
        self.assertIn('exports no layer="lock"', self.problems('payonce_duplicates_total{layer=~"token|lock"}')[0])

    def test_grouping_by_an_unknown_label_fails(self):
        self.assertIn('groups by channel', self.problems('sum by (channel) (payonce_breaker_state)')[0])

    def test_alert_rules_are_checked_too(self):
        rules = {"groups": [{"name": "g", "rules": [{"alert": "A", "expr": "payonce_breaker_states == 2"}]}]}
        problems = mr.check(self.exported, dashboard(), rules)[0]
        self.assertEqual(problems, ['alert A: metric payonce_breaker_states is not exported'])

    def test_promtool_refuses_bad_promql(self):
        problems = self.problems('sum by (layer) (rate(payonce_duplicates_total[5m])')
        self.assertEqual(len(problems), 1)
        self.assertIn('promtool check rules refuses', problems[0])


if __name__ == "__main__":
    unittest.main()
