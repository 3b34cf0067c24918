#!/usr/bin/python3
"""scripts/ab_table.py: an A/B's runs by case and build, and each build's mean over old's (ctest unit.ab_table)."""
import importlib.util
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

_path = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "ab_table.py"
_spec = importlib.util.spec_from_file_location("ab_table", _path)
ab_table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ab_table)


def case(gcells, grid=(512, 512, 512)):
    return {"equation": "heat", "precision": "float32", "radius": 1, "grid": list(grid),
            "cluster_plan": "deep,64,32,8", "cells_per_second": gcells * 1e9}


class AbTable(unittest.TestCase):
    def test_builds_in_run_order_and_ratios(self):
        d = tempfile.mkdtemp()
        # Order old new mid mid new old, numbered past 9 (10 sorts after 9, not after 1).
        for n, build, g in [(8, "old", 100), (9, "new", 120), (10, "mid", 110), (11, "mid", 110), (12, "new", 130),
                            (13, "old", 100)]:
            (pathlib.Path(d) / f"ab-{n}-{build}.json").write_text(json.dumps({"cases": [case(g)]}))
        (pathlib.Path(d) / "other.json").write_text("{}")  # not an A/B run: left alone
        rows = ab_table.table(d)
        self.assertEqual(len(rows), 1)
        r = next(iter(rows.values()))
        self.assertEqual(list(r), ["old", "new", "mid"])
        self.assertEqual(r["new"], [120.0, 130.0])
        out = subprocess.run([sys.executable, str(_path), d], capture_output=True, text=True, check=True).stdout
        self.assertIn("new/old 1.250", out)
        self.assertIn("mid/old 1.100", out)
        self.assertIn("old  100.0  100.0", out)


if __name__ == "__main__":
    unittest.main()
