// texref.cu -- texture and surface references (`texture<T, dim, mode>` and `surface<void,
// dim>` globals), which CUDA 12 removed: nvcc 12 and later reject this file ("texture is not
// a template") and warpscope reads it with the source interpreter. tests/data/ptx/texref.ptx
// is this file compiled by nvcc 11.8 (tests/texture_source.rs compares the two). The kernels
// are examples/texture.cu's and texture_forms.cu's with references for objects.

#define R 2

__constant__ float weights[(2 * R + 1) * (2 * R + 1)];

texture<float, 2, cudaReadModeElementType> img;
texture<float, 1, cudaReadModeElementType> data;
texture<float> row;
texture<float, 3> vol;
texture<float, cudaTextureType1DLayered> layers1;
texture<float, cudaTextureType2DLayered, cudaReadModeElementType> layers;
texture<uchar4, 2, cudaReadModeNormalizedFloat> rgba;
texture<int, 2> ints;
surface<void, 2> src;
surface<void, 2> dst;
surface<void, 2> dst4;

// examples/texture.cu conv_texture: --texture img=array:1024x1024:float
__global__ void conv_texref(float* out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    float sum = 0.0f;
    for (int dy = -R; dy <= R; dy++)
        for (int dx = -R; dx <= R; dx++)
            sum += weights[(dy + R) * (2 * R + 1) + dx + R]
                   * tex2D(img, x + dx + 0.5f, y + dy + 0.5f);
    out[y * w + x] = sum;
}

// examples/texture.cu gather_texture: --texture data=linear:65536:float
__global__ void gather_texref(const int* idx, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex1Dfetch(data, idx[i]);
}

// texture_forms.cu fetch_forms.
__global__ void fetch_forms_texref(float* out, int w)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    float s = tex1D(row, x + 0.5f);
    s += tex3D(vol, x + 0.5f, y + 0.5f, (x & 3) + 0.5f);
    s += tex1DLayered(layers1, x + 0.5f, y & 7);
    s += tex2DLayered(layers, x + 0.5f, y + 0.5f, x & 7);
    float4 c = tex2D(rgba, x + 0.5f, y + 0.5f);
    int i = tex2D(ints, y + 0.5f, x + 0.5f);
    float4 g = tex2Dgather(img, x + 0.5f, y + 0.5f, 1);
    out[y * w + x] = s + c.x + c.w + i + g.y;
}

// texture_forms.cu copy_surface.
__global__ void copy_surfref(int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    float v;
    surf2Dread(&v, src, x * 4, y);
    float u;
    surf2Dread(&u, src, x * 4, h - 1 - y);
    surf2Dwrite(v + u, dst, x * 4, y);
    surf2Dwrite(make_float4(v, u, v, u), dst4, y * 16, x);
}
