// Probe: shared-memory wavefronts of single warp instructions on the device at hand.
// Each launch is one warp (block of 32 threads) executing exactly one ld/st.shared of
// width W with per-lane byte offsets from a table; ncu reads the wavefronts:
//   ncu --clock-control none --csv --metrics \
//     l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,\
//     l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,\
//     smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum ./smem_wavefronts
// Build: nvcc -arch=sm_90 -O3 -o smem_wavefronts smem_wavefronts.cu
// The program prints one line per launch (in launch order): id,name,width,op,mask.
#include <cstdio>
#include <cstdint>
#include <vector>
#include <string>
#include <cuda_runtime.h>

__device__ unsigned sink[32];

template <int W, bool ST>
__global__ void probe(const unsigned* __restrict__ offs, unsigned mask) {
    __shared__ __align__(16) unsigned char s[16384];
    unsigned lane = threadIdx.x & 31;
    unsigned a = (unsigned)__cvta_generic_to_shared(s) + offs[lane];
    unsigned r0 = 0, r1 = 0, r2 = 0, r3 = 0;
    if ((mask >> lane) & 1) {
        if (!ST) {
            if (W == 1) asm volatile("ld.shared.u8 %0, [%1];" : "=r"(r0) : "r"(a) : "memory");
            if (W == 2) asm volatile("ld.shared.u16 %0, [%1];" : "=r"(r0) : "r"(a) : "memory");
            if (W == 4) asm volatile("ld.shared.u32 %0, [%1];" : "=r"(r0) : "r"(a));
            if (W == 8) asm volatile("ld.shared.v2.u32 {%0,%1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(a));
            if (W == 16)
                asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];"
                             : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(a));
        } else {
            unsigned v = lane;
            if (W == 1) asm volatile("st.shared.u8 [%0], %1;" ::"r"(a), "r"(v));
            if (W == 2) asm volatile("st.shared.u16 [%0], %1;" ::"r"(a), "r"(v));
            if (W == 4) asm volatile("st.shared.u32 [%0], %1;" ::"r"(a), "r"(v));
            if (W == 8) asm volatile("st.shared.v2.u32 [%0], {%1,%1};" ::"r"(a), "r"(v));
            if (W == 16) asm volatile("st.shared.v4.u32 [%0], {%1,%1,%1,%1};" ::"r"(a), "r"(v));
        }
    }
    sink[lane] = r0 + r1 + r2 + r3;
}

struct Pat { std::string name; int w; bool st; unsigned offs[32]; unsigned mask; };

template <typename F>
Pat mk(const char* name, int w, bool st, F f, unsigned mask = 0xffffffffu) {
    Pat p; p.name = name; p.w = w; p.st = st; p.mask = mask;
    for (unsigned l = 0; l < 32; l++) p.offs[l] = f(l);
    return p;
}

template <int W>
void launch(bool st, const unsigned* d, unsigned mask) {
    if (st) probe<W, true><<<1, 32>>>(d, mask); else probe<W, false><<<1, 32>>>(d, mask);
}

int main() {
    std::vector<Pat> v;
    auto qmerge = [](unsigned l) { unsigned q = l / 8, k = l % 8;
        return (q >= 2 ? 256u : 0u) + ((q & 1) ? 64u : 0u) + (k % 4) * 16 + (k / 4) * 128; };
    auto hsplit8 = [](unsigned l) { unsigned h = l / 16, k = l % 16;
        return h * 64 + (k % 8) * 8 + (k / 8) * 128; };
    for (int st = 0; st < 2; st++) {
        bool S = st;
        v.push_back(mk("w16_s1", 16, S, [](unsigned l) { return 16 * l; }));
        v.push_back(mk("w16_pair", 16, S, [](unsigned l) { return 16 * (l / 2); }));
        v.push_back(mk("w16_same", 16, S, [](unsigned l) { return 0u; }));
        v.push_back(mk("w16_xor2", 16, S, [](unsigned l) { return 16 * ((l >> 2) * 2 + (l & 1)); }));
        v.push_back(mk("w16_forum_tid4", 16, S, [](unsigned l) { return (l % 4) * 16; }));
        v.push_back(mk("w16_qmerge", 16, S, qmerge));
        v.push_back(mk("w16_pair_s4", 16, S, [](unsigned l) { return 64 * (l / 2); }));
        v.push_back(mk("w16_dup8", 16, S, [](unsigned l) { return 16 * (l % 8); }));
        v.push_back(mk("w16_dup16", 16, S, [](unsigned l) { return 16 * (l % 16); }));
        v.push_back(mk("w16_s1_q0only", 16, S, [](unsigned l) { return 16 * l; }, 0xffu));
        v.push_back(mk("w16_s1_lanes0_8", 16, S, [](unsigned l) { return 16 * l; }, 0x101u));
        v.push_back(mk("w16_pair_lane1_off", 16, S, [](unsigned l) { return 16 * (l / 2); }, 0xfffffffdu));
        v.push_back(mk("w16_pair_half0", 16, S, [](unsigned l) { return 16 * (l / 2); }, 0xffffu));
        v.push_back(mk("w16_s2", 16, S, [](unsigned l) { return 32 * l; }));
        v.push_back(mk("w16_pair_then_s1", 16, S, [](unsigned l) { return l < 16 ? 16 * (l / 2) : 16 * l; }));
        v.push_back(mk("w16_same_lane0", 16, S, [](unsigned l) { return 0u; }, 0x1u));
        v.push_back(mk("w8_s1", 8, S, [](unsigned l) { return 8 * l; }));
        v.push_back(mk("w8_pair", 8, S, [](unsigned l) { return 8 * (l / 2); }));
        v.push_back(mk("w8_same", 8, S, [](unsigned l) { return 0u; }));
        v.push_back(mk("w8_dup16", 8, S, [](unsigned l) { return 8 * (l % 16); }));
        v.push_back(mk("w8_hsplit", 8, S, hsplit8));
        v.push_back(mk("w8_s3", 8, S, [](unsigned l) { return 24 * l; }));
        v.push_back(mk("w8_s2", 8, S, [](unsigned l) { return 16 * l; }));
        v.push_back(mk("w8_xor2", 8, S, [](unsigned l) { return 8 * ((l >> 2) * 2 + (l & 1)); }));
        v.push_back(mk("w8_s1_half0", 8, S, [](unsigned l) { return 8 * l; }, 0xffffu));
        v.push_back(mk("w8_same_lane0", 8, S, [](unsigned l) { return 0u; }, 0x1u));
        v.push_back(mk("w4_s1", 4, S, [](unsigned l) { return 4 * l; }));
        v.push_back(mk("w4_same", 4, S, [](unsigned l) { return 0u; }));
        v.push_back(mk("w4_s2", 4, S, [](unsigned l) { return 8 * l; }));
        v.push_back(mk("w4_s32", 4, S, [](unsigned l) { return 128 * l; }));
        v.push_back(mk("w4_pair", 4, S, [](unsigned l) { return 4 * (l / 2); }));
        v.push_back(mk("w4_s32_pair", 4, S, [](unsigned l) { return 128 * (l / 2); }));
        v.push_back(mk("w4_hconf", 4, S, [](unsigned l) { return 4 * (l % 16) + (l / 16) * 128; }));
        v.push_back(mk("w2_s1", 2, S, [](unsigned l) { return 2 * l; }));
        v.push_back(mk("w2_s4", 2, S, [](unsigned l) { return 8 * l; }));
        v.push_back(mk("w1_s1", 1, S, [](unsigned l) { return l; }));
        v.push_back(mk("w1_s5", 1, S, [](unsigned l) { return 5 * l; }));
        v.push_back(mk("w1_s4", 1, S, [](unsigned l) { return 4 * l; }));
        v.push_back(mk("w1_s8", 1, S, [](unsigned l) { return 8 * l; }));
        v.push_back(mk("w1_same", 1, S, [](unsigned l) { return 0u; }));
        v.push_back(mk("w2_s2", 2, S, [](unsigned l) { return 4 * l; }));
        v.push_back(mk("w16_pair_conf", 16, S, [](unsigned l) { unsigned p = l / 2, h = p / 8, k = p % 8, q = k / 4, j = k % 4;
            return h * 1024 + q * 256 + (j % 2) * 16 + (j / 2) * 128; }));
        v.push_back(mk("w8_pair_conf", 8, S, [](unsigned l) { unsigned p = l / 2;
            return 8 * (p % 4) + 128 * ((p / 4) % 2) + 32 * (p / 8); }));
        v.push_back(mk("w16_mixpair", 16, S, [](unsigned l) { return l < 16 ? 16 * (l / 2) : 128 + 16 * (((l - 16) >> 2) * 2 + (l & 1)); }));
        v.push_back(mk("w8_mixpair", 8, S, [](unsigned l) { return l < 16 ? 8 * (l / 2) : 64 + 8 * (((l - 16) >> 2) * 2 + (l & 1)); }));
        v.push_back(mk("w16_pair_rev", 16, S, [](unsigned l) { return 16 * (15 - l / 2); }));
        v.push_back(mk("w16_quad", 16, S, [](unsigned l) { return 16 * (l / 4); }));
        v.push_back(mk("w8_quad", 8, S, [](unsigned l) { return 8 * (l / 4); }));
        v.push_back(mk("w1_s128", 1, S, [](unsigned l) { return 128 * l; }));
    }
    unsigned* d;
    if (cudaMalloc(&d, v.size() * 32 * sizeof(unsigned)) != cudaSuccess) { printf("malloc failed\n"); return 1; }
    for (size_t i = 0; i < v.size(); i++)
        cudaMemcpy(d + 32 * i, v[i].offs, 32 * sizeof(unsigned), cudaMemcpyHostToDevice);
    for (size_t i = 0; i < v.size(); i++) {
        const Pat& p = v[i];
        const unsigned* di = d + 32 * i;
        switch (p.w) {
            case 1: launch<1>(p.st, di, p.mask); break;
            case 2: launch<2>(p.st, di, p.mask); break;
            case 4: launch<4>(p.st, di, p.mask); break;
            case 8: launch<8>(p.st, di, p.mask); break;
            default: launch<16>(p.st, di, p.mask); break;
        }
        cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess) { printf("error %s at %s\n", cudaGetErrorString(e), p.name.c_str()); return 1; }
        printf("PAT,%zu,%s,%d,%s,0x%08x\n", i, p.name.c_str(), p.w, p.st ? "st" : "ld", p.mask);
    }
    return 0;
}
