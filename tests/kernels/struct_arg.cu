// struct_arg.cu -- a kernel whose sizes come in a struct passed by value, as Rodinia
// lavaMD's par_str/dim_str do: `--arg p.n=65536 --arg p.stride=2 --arg p.scale=2
// --arg p.offset=1` (tests/data/h100/verify/failures.txt measures it on the H100).
struct params {
    int n;
    int stride;
    float scale;
    long offset;
};

__global__ void scaled_copy(params p, const float *in, float *out)
{
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < p.n)
        out[i] = p.scale * in[i * p.stride + p.offset];
}
