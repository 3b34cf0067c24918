#!/usr/bin/python3
"""scripts/ncu_regions.py: its loops and its regions' shares from an ncu source-page CSV (ctest unit.ncu_regions)."""
import csv
import importlib.util
import pathlib
import tempfile
import unittest

_path = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "ncu_regions.py"
_spec = importlib.util.spec_from_file_location("ncu_regions", _path)
ncu_regions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ncu_regions)

HEADER = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Instructions Executed", "stall_no_inst",
          "stall_long_sb"]
BASE = 0x7F0000000000


def write(rows):
    """A CSV as ncu writes its source page: the kernel's name, the header, a row an instruction."""
    f = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False, newline="")
    w = csv.writer(f, quoting=csv.QUOTE_ALL)
    w.writerow(["Kernel Name", "void k(float *)"])
    w.writerow(HEADER)
    for i, (source, samples, executed, no_inst, long_sb) in enumerate(rows):
        w.writerow([hex(BASE + 16 * i), "      " + source, samples, executed, no_inst, long_sb])
    f.close()
    return f.name


# Ten instructions: a set-up of two, a loop over 2..7 (its branch back to
# instruction 2, given from the function's start as cuobjdump writes it),
# and two after it.
ROWS = [("LDC R1, c[0x0][0x28]", 1, 10, 1, 0),
        ("S2R R0, SR_TID.X", 1, 10, 0, 0),
        ("LDG.E R2, desc[UR4][R4.64]", 30, 100, 0, 20),
        ("FADD R2, R2, R3", 10, 100, 2, 0),
        ("FFMA R2, R2, R3, R4", 10, 100, 0, 0),
        ("ISETP.NE.AND P0, PT, R5, RZ, PT", 5, 100, 0, 0),
        ("IADD3 R5, R5, -0x1, RZ", 5, 100, 0, 0),
        ("@P0 BRA 0x20", 20, 100, 10, 0),
        ("STG.E desc[UR4][R6.64], R2", 8, 10, 0, 8),
        ("EXIT", 10, 10, 0, 0)]


class Regions(unittest.TestCase):
    def test_a_loop_and_the_rest(self):
        ins = ncu_regions.read(write(ROWS))
        self.assertEqual(len(ins), 10)
        self.assertEqual(ncu_regions.loops(ins, 3), [(2, 7)])
        (loop, size, executed, time, by), (rest, rest_size, rest_executed, rest_time, rest_by) = \
            ncu_regions.summarise(ins, 3)
        self.assertEqual((loop, size, rest, rest_size), ("loop 2-7", 6, "outside the loops", 4))
        self.assertAlmostEqual(executed, 100 * 600 / 640)
        self.assertAlmostEqual(time, 100 * 80 / 100)
        self.assertAlmostEqual(by["long_sb"], 20.0)
        self.assertAlmostEqual(by["no_inst"], 12.0)
        self.assertAlmostEqual(rest_executed, 100 * 40 / 640)
        self.assertAlmostEqual(rest_by["long_sb"], 8.0)

    def test_a_short_loop_is_not_a_region(self):
        ins = ncu_regions.read(write(ROWS))
        self.assertEqual(ncu_regions.loops(ins, 6), [])
        ((name, size, executed, time, _),) = ncu_regions.summarise(ins, 6)
        self.assertEqual((name, size), ("outside the loops", 10))
        self.assertAlmostEqual(executed, 100.0)
        self.assertAlmostEqual(time, 100.0)


if __name__ == "__main__":
    unittest.main()
