#!/usr/bin/env bash
# Two "nodes" on one machine: network namespaces joined by a veth pair
# (10.213.77.1 and .2, a /24 that exists only between them), each with its own
# hostname (UTS namespace). mpirun starts in the first; OpenMPI's rsh launcher
# starts orted in the second through an agent that enters it; ranks talk over
# the TCP BTL on the veth only. heatwave on 2 ranks (one per namespace) must
# equal 1 rank bit for bit, and the halo traffic must have crossed the veth.
# With a second argument, the MPI GoogleTests (Mpi*: HDF5 writes, restarts on
# another rank count) run the same way.
# Skips (exit 77) with the reason where namespaces cannot be created.
#   netns_mpi_test.sh HEATWAVE [HEATWAVE_TESTS]
set -u
heatwave=$(realpath "$1")
gtests=${2:+$(realpath "$2")}
[[ $(id -u) -eq 0 ]] || { echo "SKIP: network namespaces need root"; exit 77; }
for tool in ip unshare mpirun; do
  command -v $tool >/dev/null || { echo "SKIP: $tool not installed (scripts/install-deps.sh installs iproute2)"; exit 77; }
done
ns1=hwjobs$$a ns2=hwjobs$$b
work=$(mktemp -d /tmp/heatwave-netns.XXXXXX)
cleanup() {
  ip netns del $ns1 2>/dev/null  # deleting a namespace deletes its veth end, and the pair with it
  ip netns del $ns2 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

if ! ip netns add $ns1 2>"$work/err" || ! ip netns add $ns2 2>>"$work/err"; then
  echo "SKIP: cannot create network namespaces here: $(cat "$work/err")"
  exit 77
fi
ip link add hwa$$ netns $ns1 type veth peer name hwb$$ netns $ns2 || fail "cannot create the veth pair"
for i in 1 2; do
  ns=ns$i
  ns=${!ns}
  dev=$([[ $i -eq 1 ]] && echo hwa$$ || echo hwb$$)
  ip -n "$ns" link set "$dev" name hwveth
  ip -n "$ns" addr add 10.213.77.$i/24 dev hwveth
  ip -n "$ns" link set hwveth up
  ip -n "$ns" link set lo up
done

# The launcher agent: `agent HOST COMMAND...` runs COMMAND inside HOST's
# namespace under HOST's name (what ssh would do on a real cluster).
cat >"$work/agent" <<AGENT
#!/usr/bin/env bash
host=\$1
shift
case \$host in node1) ns=$ns1 ;; node2) ns=$ns2 ;; *) echo "agent: unknown host \$host" >&2; exit 1 ;; esac
exec ip netns exec "\$ns" unshare --uts bash -c 'hostname "\$0" && exec bash -c "\$1"' "\$host" "\$*"
AGENT
chmod +x "$work/agent"

cd "$work"
for n in 1 2; do cat >case$n.yaml <<YAML
equation: wave
grid: {points: [96, 80]}
stencil: {radius: 2}
time: {dt: auto, steps: 300}
boundary: {default: {type: dirichlet, value: 0.0}, x_low: neumann}
initial: {type: random, seed: 11}
backend: host
threads: 1
metrics: {file: ""}
checkpoint: {every: 300, keep: 1, dir: ranks$n}
YAML
done
export OMP_NUM_THREADS=1
timeout 60 "$heatwave" run case1.yaml >one.txt 2>&1 || { cat one.txt; fail "1-rank run failed"; }

rx_bytes() { ip -n $ns2 -s -j link show hwveth | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)[0]['stats64']['rx']['bytes'])"; }
before=$(rx_bytes)
mca=(--mca plm rsh --mca plm_rsh_agent "$work/agent" --mca pml ob1 --mca btl tcp,self
     --mca btl_tcp_if_include hwveth --mca oob_tcp_if_include hwveth)
on_two_nodes() {  # on_two_nodes COMMAND...: one rank in each namespace
  timeout 120 ip netns exec $ns1 unshare --uts bash -c 'hostname node1 && exec "$@"' mpirun \
    mpirun --allow-run-as-root --host node1:1,node2:1 -n 2 --map-by node "${mca[@]}" "$@"
}
code=0
on_two_nodes bash -c 'echo "rank $OMPI_COMM_WORLD_RANK on $(hostname), $(ip -br addr show hwveth | tr -s " ")"; exec "$0" "$@"' \
  "$heatwave" run case2.yaml >two.txt 2>&1 || code=$?
grep -E "^rank|2 rank|error" two.txt
[[ $code -eq 0 ]] || { cat two.txt; fail "the 2-namespace run exited $code"; }
grep -q "rank 0 on node1, hwveth.* UP 10.213.77.1/24" two.txt && grep -q "rank 1 on node2, hwveth.* UP 10.213.77.2/24" two.txt ||
  fail "the ranks did not run one per namespace"
crossed=$(($(rx_bytes) - before))
echo "bytes received on node2's veth during the run: $crossed"
# 300 exchanges of 2 columns of 80 float64 values, plus startup and I/O coordination.
((crossed > 300 * 2 * 80 * 8)) || fail "too little traffic crossed the veth ($crossed bytes): ranks did not talk over TCP"

/usr/bin/python3 - <<'PY' || fail "2 ranks across namespaces differ from 1 rank"
import h5py, numpy as np
a = h5py.File("ranks1/checkpoint_000000300.h5", "r")
b = h5py.File("ranks2/checkpoint_000000300.h5", "r")
assert b.attrs["ranks"] == 2 and a.attrs["ranks"] == 1
for name in ("u", "u_previous"):
    ua, ub = a[name][...], b[name][...]
    assert ua.shape == ub.shape == (80, 96), (ua.shape, ub.shape)
    differing = int(np.count_nonzero(ua.view(np.uint64) != ub.view(np.uint64)))
    assert differing == 0, f"{name}: {differing} of {ua.size} values differ"
print("2 ranks in 2 namespaces over TCP == 1 rank, bitwise (u, u_previous)")
PY
if [[ -n $gtests ]]; then
  on_two_nodes "$gtests" --gtest_filter='Mpi*' --gtest_color=no >gtests.txt 2>&1 || { cat gtests.txt; fail "the MPI GoogleTests failed across namespaces"; }
  grep -E "tests? from .* ran|PASSED" gtests.txt | sort -u
  grep -Eq "^\[  PASSED  \] [1-9][0-9]* tests?\." gtests.txt || fail "no MPI GoogleTest passed across namespaces"
  ! grep -q "^\[  SKIPPED \]" gtests.txt || fail "MPI GoogleTests skipped across namespaces"
fi
echo "PASS"
