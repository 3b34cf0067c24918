#!/usr/bin/python3
"""scripts/ptxas_usage.py: its reading of ptxas's report, its table against a kept one (ctest unit.ptxas_usage)."""
import importlib.util
import pathlib
import unittest

_path = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "ptxas_usage.py"
_spec = importlib.util.spec_from_file_location("ptxas_usage", _path)
ptxas_usage = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ptxas_usage)

# As nvcc -Xptxas -v writes it (two entries of a unit, CUDA 13, sm_90a).
REPORT = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z1aPf' for 'sm_90a'
ptxas info    : Function properties for _Z1aPf
    8 bytes stack frame, 12 bytes spill stores, 20 bytes spill loads
ptxas info    : Used 128 registers, used 1 barriers, 16 bytes smem
ptxas info    : Compile time = 517.560 ms
ptxas info    : Compiling entry function '_Z1bPd' for 'sm_90a'
ptxas info    : Function properties for _Z1bPd
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 94 registers, used 1 barriers
ptxas info    : Compile time = 12.000 ms
"""


class Parse(unittest.TestCase):
    def test_each_entry_its_numbers(self):
        kernels = ptxas_usage.parse(REPORT)
        self.assertEqual([k["kernel"] for k in kernels], ["_Z1aPf", "_Z1bPd"])
        self.assertEqual([k["arch"] for k in kernels], ["sm_90a", "sm_90a"])
        a, b = kernels
        self.assertEqual((a["registers"], a["stack"], a["spill_stores"], a["spill_loads"]), (128, 8, 12, 20))
        self.assertEqual((b["registers"], b["stack"], b["spill_stores"], b["spill_loads"]), (94, 0, 0, 0))

    def test_an_entry_without_its_numbers_is_an_error(self):
        cut = REPORT.split("ptxas info    : Used 94")[0]
        with self.assertRaisesRegex(ValueError, "_Z1bPd"):
            ptxas_usage.parse(cut)

    def test_no_entry(self):
        self.assertEqual(ptxas_usage.parse("ptxas info    : 0 bytes gmem\n"), [])


def row(unit, kernel, registers, stores=0, loads=0):
    return {"unit": unit, "kernel": kernel, "registers": registers, "stack": stores, "spill_stores": stores,
            "spill_loads": loads}


class Table(unittest.TestCase):
    before = {(r["unit"], r["kernel"]): r for r in
              [row("u", "same", 100), row("u", "moved", 128), row("u", "gone", 90, 8, 8), row("v", "other", 64)]}
    after = [row("u", "same", 100), row("u", "moved", 128, 8, 8), row("u", "new", 80)]

    def test_all_rows_without_a_kept_table(self):
        self.assertEqual([(r["kernel"], was) for r, was in ptxas_usage.table(self.after)],
                         [("same", ""), ("moved", ""), ("new", "")])

    def test_against_a_kept_table_what_changed_came_and_went(self):
        shown = [(r["kernel"], was) for r, was in ptxas_usage.table(self.after, self.before)]
        # "other" is in a unit not compiled now: not reported gone.
        self.assertEqual(shown, [("moved", " (was 128 0 0 0)"), ("new", " (new)"), ("gone", " (gone)")])

    def test_spills_now_or_before(self):
        self.assertEqual([r["kernel"] for r, _ in ptxas_usage.table(self.after, spills_only=True)], ["moved"])
        self.assertEqual([r["kernel"] for r, _ in ptxas_usage.table(self.after, self.before, True)], ["moved", "gone"])


class Command(unittest.TestCase):
    ninja = ("/usr/local/cuda/bin/nvcc -I/work/main -O3 -MD -MT x.cu.o -MF x.cu.o.d -x cu -c "
             "/work/main/build/generated/cluster/x.cu -o CMakeFiles/x.cu.o")

    def test_the_output_moves_and_the_dependency_file_goes(self):
        self.assertEqual(ptxas_usage.unit_command(self.ninja, "/tmp/s/x.o"),
                         ["/usr/local/cuda/bin/nvcc", "-I/work/main", "-O3", "-x", "cu", "-c",
                          "/work/main/build/generated/cluster/x.cu", "-o", "/tmp/s/x.o", "-Xptxas", "-v"])

    def test_an_overlay_is_searched_before_the_tree(self):
        args = ptxas_usage.unit_command(self.ninja, "/tmp/s/x.o", "/tmp/variant")
        self.assertEqual(args[:4], ["/usr/local/cuda/bin/nvcc", "-I", "/tmp/variant", "-I/work/main"])
        self.assertEqual(args[4:], ptxas_usage.unit_command(self.ninja, "/tmp/s/x.o")[2:])


if __name__ == "__main__":
    unittest.main()
