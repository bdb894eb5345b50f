#!/usr/bin/env bash
# Texture/surface probes on the H100: builds probes.cu, lists the texture-pipe metrics this
# ncu offers, profiles every launch with them, and joins ncu's rows with the manifest.
#
# usage (repository root, on a machine with an H100, nvcc, ncu, python3):
#     scripts/h100/texture/run.sh [OUTDIR]      (OUTDIR defaults to $OUT, else /tmp/warpscope-tex)
# Outputs: texture-probes.csv (one row per launch: probe,kernel,texture,lanes,grid,block,
# then one column per metric), metrics.txt (the texture/surface metric names of this ncu),
# sass.txt (the probes' texture/surface SASS), run.log.
set -u
set -o pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
OUTDIR=${1:-${OUT:-/tmp/warpscope-tex}}
mkdir -p "$OUTDIR"
WORK=$(mktemp -d /tmp/warpscope-tex.XXXXXX)
cd "$ROOT" || exit 1
{
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
ncu --version | tail -1; nvcc --version | grep release
nvcc -O3 -arch=sm_90 -lineinfo -o "$WORK/probes" scripts/h100/texture/probes.cu || exit 1
cuobjdump -sass "$WORK/probes" | grep -E "Function|TEX|TLD|SULD|SUST|SUQ|TXQ|LDG|STG" > "$OUTDIR/sass.txt"
ncu --query-metrics --chip gh100 > "$WORK/all-metrics.txt" 2>&1
grep -E "pipe_tex|texin|surface|_tex_|texture|op_texture|op_surface" "$WORK/all-metrics.txt" > "$OUTDIR/metrics.txt"
WANT="l1tex__t_requests_pipe_tex_mem_texture l1tex__t_sectors_pipe_tex_mem_texture \
l1tex__t_sectors_pipe_tex_mem_texture_lookup_hit l1tex__t_sectors_pipe_tex_mem_texture_lookup_miss \
l1tex__t_requests_pipe_tex_mem_surface l1tex__t_sectors_pipe_tex_mem_surface \
l1tex__t_requests_pipe_tex_mem_surface_op_ld l1tex__t_sectors_pipe_tex_mem_surface_op_ld \
l1tex__t_requests_pipe_tex_mem_surface_op_st l1tex__t_sectors_pipe_tex_mem_surface_op_st \
l1tex__t_requests_pipe_tex l1tex__t_sectors_pipe_tex l1tex__t_sectors_pipe_tex_lookup_hit l1tex__t_sectors_pipe_tex_lookup_miss \
l1tex__texin_requests_mem_texture l1tex__texin_requests_mem_surface l1tex__f_wavefronts_pipe_tex \
l1tex__t_output_wavefronts_pipe_tex_mem_texture l1tex__data_pipe_tex_wavefronts_mem_texture l1tex__data_pipe_tex_wavefronts_mem_surface \
l1tex__m_xbar2l1tex_read_sectors_mem_texture l1tex__m_l1tex2xbar_write_sectors_mem_surface \
smsp__inst_executed_op_texture smsp__inst_executed_op_surface_ld smsp__inst_executed_op_surface_st \
l1tex__t_requests_pipe_lsu_mem_global_op_ld l1tex__t_sectors_pipe_lsu_mem_global_op_ld \
l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss \
lts__t_sectors_srcunit_tex_op_read lts__t_sectors_srcunit_tex_op_write dram__bytes_read"
METRICS=""
for m in $WANT; do
  if grep -qE "^[[:space:]]*$m[[:space:]]" "$WORK/all-metrics.txt"; then METRICS="$METRICS,$m.sum"; else echo "not offered: $m"; fi
done
METRICS=${METRICS#,}
echo "metrics: $METRICS"
ncu --clock-control none --print-units base --csv --page raw --metrics "$METRICS" \
    "$WORK/probes" "$WORK/manifest.csv" > "$WORK/ncu.csv" 2> "$WORK/ncu.err"
echo "ncu exit $?"; tail -5 "$WORK/ncu.err"
python3 scripts/h100/texture/collect.py "$WORK/manifest.csv" "$WORK/ncu.csv" > "$OUTDIR/texture-probes.csv"
echo "rows: $(wc -l < "$OUTDIR/texture-probes.csv")"
cp "$WORK/manifest.csv" "$OUTDIR/manifest.csv"
} 2>&1 | tee "$OUTDIR/run.log"
