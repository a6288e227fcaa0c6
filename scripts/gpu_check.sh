#!/usr/bin/env bash
# The GPU checks of repro2, in one run on a machine with an NVIDIA GPU (a few minutes on one
# recent GPU): the selftest on the GPU (golden hashes and the conformance suite, the int8 GEMM
# path included) and on the machine's CPU (its fused kernels), the golden hashes again with each exact GEMM path forced, the 100-step hashes
# of every preset on this machine's CPU and GPU (both paths), data-parallel workers when there
# are two GPUs, and the scale table. Results go to $OUT (default ./gpu-check); exit 1 when a
# hash or a check differs.
# Run: bash scripts/gpu_check.sh   (after scripts/setup.sh, with a CUDA build of torch)
set -uo pipefail
out="${OUT:-gpu-check}"
mkdir -p "$out"
py=.venv/bin/python
[ -x "$py" ] || py=python3
status=0
run() {  # name, command...: log to $out/name.log, keep the worst exit status
    local name=$1
    shift
    echo "== $name: $*"
    "$@" >"$out/$name.log" 2>&1
    local rc=$?
    tail -n 5 "$out/$name.log"
    [ $rc -eq 0 ] || { echo "   -> exit $rc"; status=1; }
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
"$py" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" | tee "$out/torch.txt"
run selftest-cuda "$py" -m cli selftest --device cuda --json
# this machine's CPU too: its fused kernels (another vendor's CPU, another LLVM target) against
# the eager chains and the golden hashes
run selftest-cpu "$py" -m cli selftest --device cpu --json
for gemm in float64 int8; do
    VERITRAIN_REPRO_GEMM=$gemm run "golden-cuda-$gemm" "$py" -m veritrain.golden --check
done
run hashes-100 "$py" -m bench.device_hashes --steps 100 --devices cpu cuda
gpus=$("$py" -c "import torch; print(torch.cuda.device_count())")
if [ "${gpus:-0}" -ge 2 ]; then
    run workers-2 "$py" -m cli train --preset llama-char --steps 20 --micro-batches 4 --workers 2 --device cuda
fi
run scale "$py" -m bench.bench_repro --scale --device cuda --steps 10 --chunk 2
exit $status
