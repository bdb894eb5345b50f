// Sparse mma probe: runs each case of cases.bin (made by gen.py) as one warp of the
// kernel it names and writes every lane's four D registers to out.bin.
//   cases.bin: u32 n; then per case: u32 kernel, 32 lanes x 17 u32 (A0-3, B0-3, C0-3, E, pad)
//   out.bin:   per case run, u32 case index then 32 lanes x 4 u32 (D registers; unused 0)
// With a third argument K only kernel K runs (each in its own process: a selector the
// hardware rejects is an illegal instruction that ends the CUDA context).
// A kernel index with bit 31 set marks a case with arbitrary (possibly invalid) metadata:
// those run in a second pass, after out.bin holds the others.
// Build: nvcc -arch=sm_90 -O2 -o probe probe.cu   (kernels.inc beside it, from gen.py)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#include "kernels.inc"

#define CK(x)                                                                   \
  do {                                                                          \
    cudaError_t e = (x);                                                        \
    if (e != cudaSuccess) {                                                     \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      exit(1);                                                                  \
    }                                                                           \
  } while (0)

int main(int argc, char** argv) {
  const char* in_path = argc > 1 ? argv[1] : "cases.bin";
  const char* out_path = argc > 2 ? argv[2] : "out.bin";
  const int only = argc > 3 ? atoi(argv[3]) : -1;
  FILE* f = fopen(in_path, "rb");
  if (!f) { perror(in_path); return 1; }
  uint32_t n;
  if (fread(&n, 4, 1, f) != 1) return 1;
  const int W = 17;
  std::vector<uint32_t> kern(n), in((size_t)n * 32 * W), out((size_t)n * 32 * 4, 0);
  for (uint32_t c = 0; c < n; ++c) {
    if (fread(&kern[c], 4, 1, f) != 1 || fread(&in[(size_t)c * 32 * W], 4, 32 * W, f) != 32 * W) {
      fprintf(stderr, "short read at case %u\n", c);
      return 1;
    }
  }
  fclose(f);
  const int nk = sizeof(KERNELS) / sizeof(KERNELS[0]);
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s (sm_%d%d), %u cases, %d kernels\n", prop.name, prop.major, prop.minor, n, nk);
  uint32_t *din, *dout;
  CK(cudaMalloc(&din, (size_t)n * 32 * W * 4));
  CK(cudaMalloc(&dout, (size_t)n * 32 * 4 * 4));
  std::vector<uint32_t> done;
  for (int pass = 0; pass < 2; ++pass) {
  for (int k = 0; k < nk; ++k) {
    if (only >= 0 && k != only) continue;
    std::vector<uint32_t> idx;
    for (uint32_t c = 0; c < n; ++c)
      if (kern[c] == ((uint32_t)k | (pass ? 0x80000000u : 0u))) idx.push_back(c);
    if (idx.empty()) continue;
    std::vector<uint32_t> buf(idx.size() * 32 * W);
    for (size_t i = 0; i < idx.size(); ++i)
      std::copy(&in[(size_t)idx[i] * 32 * W], &in[(size_t)(idx[i] + 1) * 32 * W], &buf[i * 32 * W]);
    CK(cudaMemcpy(din, buf.data(), buf.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(dout, 0, idx.size() * 32 * 4 * 4));
    KERNELS[k].fn<<<(unsigned)idx.size(), 32>>>(din, dout);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<uint32_t> ob(idx.size() * 32 * 4);
    CK(cudaMemcpy(ob.data(), dout, ob.size() * 4, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < idx.size(); ++i) {
      std::copy(&ob[i * 32 * 4], &ob[(i + 1) * 32 * 4], &out[(size_t)idx[i] * 32 * 4]);
      done.push_back(idx[i]);
    }
    printf("pass %d %-90s %zu cases\n", pass, KERNELS[k].name, idx.size());
  }
  FILE* g = fopen(out_path, "wb");
  for (uint32_t c : done) {
    fwrite(&c, 4, 1, g);
    fwrite(&out[(size_t)c * 32 * 4], 4, 32 * 4, g);
  }
  fclose(g);
  printf("pass %d: wrote %s\n", pass, out_path);
  fflush(stdout);
  }
  return 0;
}
