#!/bin/sh
# On the H100: runs each kernel of the probe in its own process (cases.bin, probe from
# gen.py and nvcc), then tars the outputs and the log into $OUT/mma_sp.tgz.
cd "$(dirname "$0")"
mkdir -p res
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > res/log.txt
nk=$(grep -c '^__global__' kernels.inc)
for k in $(seq 0 $((nk - 1))); do
  ./probe cases.bin res/out_$k.bin $k >> res/log.txt 2>&1 || echo "kernel $k: exit $?" >> res/log.txt
done
tar czf "$OUT/mma_sp.tgz" res
grep -v Advisory res/log.txt | grep -v "^pass" | tail -20
