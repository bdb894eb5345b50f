#!/usr/bin/env bash
# Experiment: does the build (-lineinfo, size of the module) change the shared-load wavefront
# noise?  Profiles the first 44 launches of the driver's banks group and the shared_noise.cu
# kernels, each built with and without -lineinfo.   usage: noise_check.sh OUTDIR
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
O=${1:-/tmp/noise-check}; mkdir -p "$O"; W=$(mktemp -d)
FULL="l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_global_ld.sum,dram__bytes_read.sum,dram__bytes_write.sum"
for v in nl li; do
    flag=""; [ $v = li ] && flag="-lineinfo"
    nvcc -O3 -arch=sm_90 $flag -o "$W/d_$v" "$ROOT/scripts/h100/driver.cu" || exit 1
    nvcc -O3 -arch=sm_90 $flag -o "$W/sn_$v" "$ROOT/scripts/h100/shared_noise.cu" || exit 1
done
for v in nl li; do
    ncu --clock-control none --print-units base --csv --launch-count 44 --metrics "$FULL" \
        "$W/d_$v" "$O/manifest_$v.csv" banks > "$O/ncu_d_$v.csv" 2>/dev/null; echo "driver $v rc=$?"
    ncu --clock-control none --print-units base --csv --metrics "$FULL" "$W/sn_$v" > "$O/ncu_sn_$v.csv" 2>/dev/null
    echo "shared_noise $v rc=$?"
done
rm -rf "$W"
