// texture_forms.cu -- every texture and surface function on texture and surface objects
// (cudaTextureObject_t / cudaSurfaceObject_t), for the source front end against the compiled
// path (tests/texture_source.rs). tests/kernels/texref.cu is the same with texture references.
//
//   fetch_forms    : tex1D, tex3D, tex1DLayered, tex2DLayered, tex2D of uchar4 read as float4,
//                    tex2D of int, tex2Dgather, one thread per x of row blockIdx.y:
//                    --texture row=array:1024:float --texture vol=array:64x64x64:float
//                    --texture layers1=array:256x8:float --texture layers=array:64x64x8:float
//                    --texture rgba=array:256x256:uchar4,read=normalized-float
//                    --texture ints=array:256x256:int --texture img=array:256x256:float
//   copy_surface   : out(x, y) = in(x, y) + in(x, h-1-y) through surfaces, and a transposed
//                    float4 write: --texture src=array:WxH:float --texture dst=array:WxH:float
//                    --texture dst4=array:HxW:float4

__global__ void fetch_forms(cudaTextureObject_t row, cudaTextureObject_t vol,
                            cudaTextureObject_t layers1, cudaTextureObject_t layers,
                            cudaTextureObject_t rgba, cudaTextureObject_t ints,
                            cudaTextureObject_t img, float* out, int w)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    float s = tex1D<float>(row, x + 0.5f);
    s += tex3D<float>(vol, x + 0.5f, y + 0.5f, (x & 3) + 0.5f);
    s += tex1DLayered<float>(layers1, x + 0.5f, y & 7);
    s += tex2DLayered<float>(layers, x + 0.5f, y + 0.5f, x & 7);
    float4 c = tex2D<float4>(rgba, x + 0.5f, y + 0.5f);
    int i = tex2D<int>(ints, y + 0.5f, x + 0.5f);
    float4 g = tex2Dgather<float4>(img, x + 0.5f, y + 0.5f, 1);
    out[y * w + x] = s + c.x + c.w + i + g.y;
}

__global__ void copy_surface(cudaSurfaceObject_t src, cudaSurfaceObject_t dst,
                             cudaSurfaceObject_t dst4, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    float v;
    surf2Dread(&v, src, x * 4, y);
    float u = surf2Dread<float>(src, x * 4, h - 1 - y);
    surf2Dwrite(v + u, dst, x * 4, y);
    surf2Dwrite(make_float4(v, u, v, u), dst4, y * 16, x);
}
