// forms.cu -- one kernel per texture/surface input form, for `warpscope verify` on a GPU
// (tests/data/h100/verify/texture.txt) and for tests/texture.rs. Every fetch's coordinates
// come from the thread's (x, y[, z]); the textures are described with --texture.

// 2-D fetch at (x·sx + ox, y·sy + oy): texel centres with ox = oy = 0.5, between texels
// (a linear-filter footprint) otherwise.
template <class T>
__global__ void fetch2d(cudaTextureObject_t t, T* out, int w, int h, float sx, float sy,
                        float ox, float oy)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    out[y * w + x] = tex2D<T>(t, x * sx + ox, y * sy + oy);
}

// Normalized coordinates: u = (x·k + 0.5) / w, so k > 1 walks past the edge and the
// address mode (wrap, mirror, clamp) decides which texel is read.
__global__ void fetch2d_normalized(cudaTextureObject_t t, float* out, int w, int h, int k)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    out[y * w + x] = tex2D<float>(t, (x * k + 0.5f) / w, (y + 0.5f) / h);
}

__global__ void fetch1d(cudaTextureObject_t t, float* out, int n, int stride)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex1D<float>(t, (i * stride) % n + 0.5f);
}

__global__ void fetch3d(cudaTextureObject_t t, float* out, int w, int h, int d)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z;
    if (x >= w || y >= h || z >= d)
        return;
    out[(z * h + y) * w + x] = tex3D<float>(t, x + 0.5f, y + 0.5f, z + 0.5f);
}

__global__ void fetch_layered(cudaTextureObject_t t, float* out, int w, int h, int layers)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int l = blockIdx.z;
    if (x >= w || y >= h || l >= layers)
        return;
    out[(l * h + y) * w + x] = tex2DLayered<float>(t, x + 0.5f, y + 0.5f, l);
}

// tld4: the four texels around (x + 1, y + 1), component 0.
__global__ void gather4(cudaTextureObject_t t, float4* out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    out[y * w + x] = tex2Dgather<float4>(t, x + 1.0f, y + 1.0f, 0);
}

// Surface copy (row order) and transpose (the write walks a column); x in bytes.
__global__ void surf_copy(cudaSurfaceObject_t src, cudaSurfaceObject_t dst, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    float v = surf2Dread<float>(src, x * 4, y);
    surf2Dwrite(v, dst, x * 4, y);
}

__global__ void surf_transpose(cudaSurfaceObject_t src, cudaSurfaceObject_t dst, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    float v = surf2Dread<float>(src, x * 4, y);
    surf2Dwrite(v, dst, y * 4, x);
}
