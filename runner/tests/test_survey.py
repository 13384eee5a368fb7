"""Unit tests for gupnm.survey: which kernels a survey runs, how rows read."""
from __future__ import annotations

import unittest

from gupnm import survey
from gupnm.prepare import debian
from gupnm.host import UsageError


def offer(rel, headers=True, flavour="amd64", suites=("trixie",)):
    return debian.Offered(rel, flavour, f"linux-image-{rel}-unsigned", rel + "-1",
                          list(suites), "unsigned", headers)


class NewestPerSeriesTest(unittest.TestCase):

    def test_one_per_series_and_flavour_newest_wins(self):
        offers = [offer("6.1.0-9-amd64"), offer("6.1.0-57-amd64"),
                  offer("6.12.117+deb13-amd64"), offer("6.12.118+deb13-amd64"),
                  offer("6.12.118+deb13-cloud-amd64", flavour="cloud-amd64"),
                  offer("7.1.13+deb13-amd64", headers=False)]
        got = survey.newest_per_series(offers, ["amd64"])
        self.assertEqual([o.release for o in got],
                         ["6.1.0-57-amd64", "6.12.118+deb13-amd64", "7.1.13+deb13-amd64"])
        got = survey.newest_per_series(offers, ["amd64", "cloud-amd64"])
        self.assertIn("6.12.118+deb13-cloud-amd64", [o.release for o in got])

    def test_no_headers_is_listed_not_dropped(self):
        row = survey._row(offer("7.1.13+deb13-amd64", headers=False), None, None)
        self.assertEqual(row["verdict"], "untested: no headers in the archive")
        self.assertIsNone(row["exit_status"])

    def test_row_from_summary(self):
        summary = {"verdict": "FAIL: shadow", "verdicts": [
            {"backing": "shadow", "access": "write", "fast": 0, "total": 512}],
            "bench_ratio": [{"threads": 1, "shadow_anon_ratio": 3.661}]}
        row = survey._row(offer("6.12.118+deb13-amd64"), summary, 1)
        self.assertEqual((row["shadow"], row["ratio"], row["exit_status"]),
                         ("0/512", 3.66, 1))

    def test_flavours_option(self):
        self.assertEqual(survey._flavours("amd64, cloud-amd64"), ["amd64", "cloud-amd64"])
        with self.assertRaises(UsageError):
            survey._flavours(" , ")


if __name__ == "__main__":
    unittest.main()
