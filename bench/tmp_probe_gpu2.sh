set -u
S=build-gpu/schedc
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for f in int8_nchw32 int8_nhwc; do echo "== $f"; timeout 150 $NCU --section WarpStateStats --section MemoryWorkloadAnalysis --section SpeedOfLight --metrics l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum,lts__t_sector_hit_rate.pct,l1tex__m_xbar2l1tex_read_sectors.sum -k regex:schedc_int8_n --launch-count 1 $S run examples/conv/$f.sched --conv "8x56x56x64 filter 64x3x3 stride 1 pad 1" --no-time 2>&1 | grep -vE "^==PROF|^    ---|^\s*$|OPT|INF" | sed -n '1,200p' ; done | tee $OUT/ncu.txt | grep -E "==|Duration|Throughput|Stall|Warp Cycles|ldgsts|hit|xbar|Issued|Eligible|Active Warps" 
