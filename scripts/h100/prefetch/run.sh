#!/usr/bin/env bash
# On the H100 (device tool, from the repository root; one run, ~2 minutes):
# 1. builds prefetch_driver.cu (tests/kernels/modern/prefetch.cu) for sm_90a, checks what its
#    tensor loads read, and measures its six launches with Nsight Compute: every gh100 metric
#    whose name says prefetch (counters only), the L2 read sectors and requests from the SMs
#    (lts__t_{sectors,requests}[_srcunit_tex]_op_read[_lookup_{hit,miss}]), L2 and DRAM
#    sectors in all, and the TMA load sectors. Writes $OUT/prefetch-ncu.csv,
#    $OUT/prefetch-run.txt, $OUT/prefetch-metrics.txt.
# 2. runs scripts/h100/device_desc/desc.py (Triton kernels with device-built tensor maps)
#    under Nsight Compute: TMA, shared-memory, global-atomic and gmma counters. Writes
#    $OUT/desc-ncu.csv, $OUT/desc-run.txt and the kernels' PTX.
#
# Measured (NVIDIA H100 80GB HBM3, driver 580.159.04, ncu 2025.3.1, Triton 3.6.0; results
# correct on the GPU; tests/data/h100/prefetch/ and tests/data/h100/device_desc/):
# - no gh100 metric has "prefetch" in its name; a prefetch's sectors are in
#   lts__t_sectors_srcunit_tex (none under _op_read): bulk_prefetch 8 x 4,096 B 1,024
#   (256 requests of 128 B), from 16 bytes past a sector 1,032 (129 each, 264 requests);
#   tensor_prefetch 256x256 fp16 in 64x64 boxes 4,096, 120x200 (pitch 240) 2,348;
# - tensor_load over the same boxes: l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld
#   2,348 and 4,096 (L2 sees 1,996 and 4,096 read sectors from the SMs: the TMA counts box
#   parts outside the tensor that L2 never serves);
# - desc.py: copy 256x128 TMA ld/st 2,048/2,048, 200x120 2,348/1,700; shared ld/st 176/240
#   instructions and wavefronts, 16 global atomics of 4 sectors (the descriptor copies);
#   matmul TMA 16,384/4,096, 132/180 shared ld/st instructions, 6,144 gmma wavefronts.
# warpscope equals every figure: tests/modern_corpus.rs prefetches_and_tma_loads_equal_the_h100,
# crates/simt/tests/tma_probe.rs, python/tests/test_triton_device_descriptors.py.
set -u
OUT=${OUT:-/tmp/prefetch-out}
mkdir -p "$OUT"
root=$(pwd)
cd scripts/h100/prefetch
nvcc -O3 -arch=sm_90a -std=c++17 -o /tmp/prefetch_driver prefetch_driver.cu -lcuda > "$OUT/prefetch-run.txt" 2>&1 || { cat "$OUT/prefetch-run.txt"; exit 1; }
/tmp/prefetch_driver | tee -a "$OUT/prefetch-run.txt"
ncu --version | tail -1 >> "$OUT/prefetch-run.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$OUT/prefetch-run.txt"
ncu --query-metrics --chip gh100 > /tmp/query.txt 2>&1
awk '{print $1}' /tmp/query.txt | grep -E '^(lts|l1tex|dram|sm|smsp|lrc|gpc|tpc)__' | grep -i prefetch \
    | grep -vE 'pct|rate|ratio|average|_per_|throughput|cycles|peak' > /tmp/m.txt
awk '{print $1}' /tmp/query.txt | grep -E '^lts__t_(sectors|requests)(_srcunit_tex)?(_op_read)?(_lookup_(hit|miss))?$' >> /tmp/m.txt
printf '%s\n' dram__sectors_read l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld lts__t_sectors_srcunit_tex_op_write >> /tmp/m.txt
sort -u /tmp/m.txt | sed 's/$/.sum/' > "$OUT/prefetch-metrics.txt"
M=$(paste -sd, "$OUT/prefetch-metrics.txt")
timeout 150 ncu --clock-control none --csv --metrics "$M" /tmp/prefetch_driver 2>"$OUT/prefetch-ncu.err" | grep -E '^"' > "$OUT/prefetch-ncu.csv"
grep -iE "error|not found|invalid" "$OUT/prefetch-ncu.err" | head -5
rm -f "$OUT/prefetch-ncu.err"
awk -F'","' '{print $5, $13, $15}' "$OUT/prefetch-ncu.csv" | grep -v ' 0"$' | cut -c1-150
cd "$root/scripts/h100/device_desc"
D=l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum,l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum,smsp__sass_inst_executed_op_global_atom.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
OUT=$OUT timeout 150 ncu --clock-control none --csv --kernel-name regex:desc_ --metrics "$D" python3 desc.py > "$OUT/desc-ncu.raw" 2>"$OUT/desc-ncu.err"
grep -vE '^"' "$OUT/desc-ncu.raw" | grep -v '^==PROF==' > "$OUT/desc-run.txt"
grep -E '^"' "$OUT/desc-ncu.raw" > "$OUT/desc-ncu.csv"
cat "$OUT/desc-run.txt"
grep -iE "error" "$OUT/desc-ncu.err" | head -5
rm -f "$OUT/desc-ncu.err"
awk -F'","' '{print $5, $13, $15}' "$OUT/desc-ncu.csv" | cut -c1-150
rm -f "$OUT/desc-ncu.raw"
