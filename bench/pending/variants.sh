# The pending patches' variants, sourced by scripts/gpu-pending.sh (which
# builds and measures them) and tests/unit/pending_patches.sh (which checks
# on every CI run that each still applies to main). A variant is main with
# some of the patches; edit the list as patches land or join.
pending_variants="old A B P W X Y T"
pending_files="kernels/cluster/kernel_3d_deep.cuh kernels/cluster/kernel_3d_deep_object.cuh"
patches_of() {  # VARIANT: its patches' numbers
  case $1 in
    old) echo "" ;;
    A) echo "1" ;;
    B) echo "1 2" ;;
    P) echo "1 2 3" ;;
    W) echo "1 2 4" ;;
    T) echo "1 2 6" ;;
    X) echo "1 2 7" ;;
    Y) echo "1 2 8" ;;
    *) return 1 ;;
  esac
}
# A patch file onto the tree (the current directory): patch(1), else git
# apply, else a strict unified-diff applier (every context and removed line
# must match); PENDING_APPLY=patch, git or python picks one.
apply_patch() {  # FILE
  local how=${PENDING_APPLY:-}
  [[ -n $how ]] || { command -v patch >/dev/null && how=patch; } || { command -v git >/dev/null && how=git; } || how=python
  case $how in
    patch) patch -s -p1 <"$1" ;;
    git) git apply "$1" ;;
    python) python3 - "$1" <<'PY' ;;
import re, sys
text = open(sys.argv[1]).read().split("\n")
i = 0
while i < len(text):
    if not text[i].startswith("--- "): i += 1; continue
    path = text[i + 1][4:].split("\t")[0][2:]
    lines = open(path).read().split("\n")
    out, at, i = [], 0, i + 2
    while i < len(text) and text[i].startswith("@@"):
        m = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,(\d+))? @@", text[i])
        start, old, new = max(int(m.group(1)) - 1, 0), int(m.group(2) or 1), int(m.group(3) or 1)
        out += lines[at:start]; at = start; i += 1
        while old > 0 or new > 0:  # the hunk's lines, by its counts
            tag, body = text[i][:1], text[i][1:]
            old -= tag in " -"; new -= tag in " +"
            if tag in " -":
                if at >= len(lines) or lines[at] != body: sys.exit(f"{path}:{at + 1}: the patch does not match")
                at += 1
            if tag in " +": out.append(body)
            i += 1
    open(path, "w").write("\n".join(out + lines[at:]))
PY
    *) echo "PENDING_APPLY=$how: not patch, git or python" >&2; return 1 ;;
  esac
}
# The pending files as variant V: main's copies from MAIN_DIR (the same
# paths), V's patches, then EXTRA (a mutant) if given.
variant_files() {  # V MAIN_DIR [EXTRA]
  local f n
  for f in $pending_files; do cp "$2/$f" "$f" || return 1; done
  for n in $(patches_of "$1"); do apply_patch bench/pending/"$n"-*.patch || return 1; done
  [[ -z ${3:-} ]] || apply_patch "$3"
}
