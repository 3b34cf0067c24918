#!/usr/bin/python3
"""scripts/sass_lines.py: a kernel's loops and their instructions by source line, from nvdisasm -g (ctest unit.sass_lines)."""
import importlib.util
import pathlib
import subprocess
import sys
import tempfile
import unittest

_path = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "sass_lines.py"
_spec = importlib.util.spec_from_file_location("sass_lines", _path)
sass_lines = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sass_lines)

# Two kernels as nvdisasm -g prints them: k_a has a set-up of two
# instructions, a loop of six (2..7: its branch back to .L_x_0) and one
# after it; k_b has no loop. Lines from two files.
LISTING = """\
//--------------------- .text.k_a --------------------------
\t.section\t.text.k_a,"ax",@progbits
k_a:
\t//## File "/src/kernels/k.cuh", line 10
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   S2R R0, SR_TID.X ;
.L_x_0:
\t//## File "/src/kernels/k.cuh", line 20
        /*0020*/                   LDS R2, [R0] ;
        /*0030*/                   LDS R3, [R0+0x4] ;
\t//## File "/usr/include/cmath", line 1399
        /*0040*/                   FFMA R2, R2, R3, R4 ;
        /*0050*/                   FFMA R2, R2, R3, R4 ;
\t//## File "/src/kernels/k.cuh", line 20
        /*0060*/                   ISETP.NE.AND P0, PT, R5, RZ, PT ;
        /*0070*/              @P0 BRA `(.L_x_0) ;
\t//## File "/src/kernels/k.cuh", line 30
        /*0080*/                   EXIT ;
//--------------------- .text.k_b --------------------------
\t.section\t.text.k_b,"ax",@progbits
k_b:
\t//## File "/src/kernels/k.cuh", line 40
        /*0000*/                   EXIT ;
"""


class SassLines(unittest.TestCase):
    def test_parse_resolves_labels_and_lines(self):
        kernels = sass_lines.parse(LISTING)
        self.assertEqual(list(kernels), ["k_a", "k_b"])
        a = kernels["k_a"]
        self.assertEqual(len(a), 9)
        self.assertEqual(a[7]["source"], "@P0 BRA 0x20")  # the label, as the address it marks
        self.assertEqual([x["line"] for x in a[:3]], ["k.cuh:10", "k.cuh:10", "k.cuh:20"])
        self.assertEqual(a[4]["line"], "cmath:1399")
        self.assertEqual(len(kernels["k_b"]), 1)

    def test_loop_and_its_lines(self):
        a = sass_lines.parse(LISTING)["k_a"]
        self.assertEqual(sass_lines.ncu_regions.loops(a, 3), [(2, 7)])
        self.assertEqual(sass_lines.ncu_regions.loops(a, 6), [])  # shorter than the least size
        lines = sass_lines.by_line(a[2:8])
        self.assertEqual([(line, count) for line, count, _ in lines], [("k.cuh:20", 4), ("cmath:1399", 2)])
        self.assertEqual(dict(lines[0][2]), {"LDS": 2, "ISETP": 1, "BRA": 1})  # a predicate is not the opcode

    def test_command_line(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write(LISTING)
        run = subprocess.run([sys.executable, str(_path), "--listing", f.name, "--kernel", "k_a", "--min", "3"],
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("9 instructions; loops (index range, size): 2-7 6", run.stdout)
        self.assertIn("     4 k.cuh:20", run.stdout)
        missing = subprocess.run([sys.executable, str(_path), "--listing", f.name, "--kernel", "nothing"],
                                 capture_output=True, text=True)
        self.assertNotEqual(missing.returncode, 0)
        self.assertIn("no kernel matches 'nothing'", missing.stderr)


if __name__ == "__main__":
    unittest.main()
