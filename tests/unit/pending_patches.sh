#!/usr/bin/env bash
# bench/pending's patches still apply to main (ctest unit.pending_patches):
# each variant of bench/pending/variants.sh, each mutant on B, and each
# patch no variant names (on B), through every applier this machine has
# (the fallback always). Each variant must differ from main and from the
# others, and be the same file whichever applier made it. A change to main
# that breaks a pending patch fails here, not in a device call.
#   bash tests/unit/pending_patches.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/bench/pending/variants.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
files="$pending_files kernels/cluster/kernel_shapes.hpp"
for f in $files; do
  mkdir -p "$work/main/$(dirname "$f")" "$work/tree/$(dirname "$f")"
  cp "$root/$f" "$work/main/$f"
done
mkdir -p "$work/tree/bench" && ln -s "$root/bench/pending" "$work/tree/bench/pending"
cd "$work/tree" || exit 1
main_sum=$(cd "$work/main" && cat $files | md5sum)
named=" $(for v in $pending_variants; do patches_of "$v"; done | tr '\n' ' ') "
appliers=python
command -v patch >/dev/null && appliers+=" patch"
command -v git >/dev/null && appliers+=" git"
declare -A made
checks=0
for applier in $appliers; do
  export PENDING_APPLY=$applier
  for f in $files; do cp "$work/main/$f" "$f"; done
  declare -A seen=()
  for v in $pending_variants; do
    variant_files "$v" "$work/main" >/dev/null 2>&1 || fail "variant $v ($applier): a patch does not apply to main"
    sum=$(cat $files | md5sum)
    [[ $v == old ]] || [[ $sum != "$main_sum" ]] || fail "variant $v ($applier) is main's files"
    [[ -z ${seen[$sum]:-} ]] || fail "variants $v and ${seen[$sum]} are the same files"
    seen[$sum]=$v
    [[ -z ${made[$v]:-} || ${made[$v]} == "$sum" ]] || fail "variant $v differs between appliers ($applier)"
    made[$v]=$sum
    checks=$((checks + 1))
  done
  for p in bench/pending/[0-9]*.patch bench/pending/mutant-*.patch; do
    n=$(basename "$p" | cut -d- -f1)
    [[ $n == mutant || $named != *" $n "* ]] || continue  # (applied in its variants above)
    variant_files B "$work/main" "$p" >/dev/null 2>&1 || fail "$p ($applier) does not apply on B"
    for f in $files; do cp "$work/main/$f" "$f"; done
    checks=$((checks + 1))
  done
done
(( checks > 0 )) || fail "nothing checked"
echo "pending patches: $checks checks through $appliers, every one applies"
