// texture.cu -- reads through the texture path (cudaTextureObject_t), beside the same reads
// from global memory, on either front end (nvcc or the source interpreter); describe each
// texture with --texture (see README "Texture and surface memory").
//
//   conv_global  : 5x5 convolution of a W x H float image read from global memory, edges
//                  clamped by hand (min/max on the indices).
//   conv_texture : the same convolution read with tex2D from a 2-D CUDA array (block-linear),
//                  edges clamped by the texture's address mode:
//                    --texture img=array:1024x1024:float
//   gather_global  : out[i] = data[idx[i]] from global memory.
//   gather_texture : out[i] = tex1Dfetch(data, idx[i]) from linear memory:
//                    --texture data=linear:65536:float --init idx=random:7 --alloc idx=65536

#define R 2

__constant__ float weights[(2 * R + 1) * (2 * R + 1)];

__global__ void conv_global(const float* img, float* out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    float sum = 0.0f;
    for (int dy = -R; dy <= R; dy++) {
        int yy = min(max(y + dy, 0), h - 1);
        for (int dx = -R; dx <= R; dx++) {
            int xx = min(max(x + dx, 0), w - 1);
            sum += weights[(dy + R) * (2 * R + 1) + dx + R] * img[yy * w + xx];
        }
    }
    out[y * w + x] = sum;
}

__global__ void conv_texture(cudaTextureObject_t img, float* out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    float sum = 0.0f;
    for (int dy = -R; dy <= R; dy++)
        for (int dx = -R; dx <= R; dx++)
            sum += weights[(dy + R) * (2 * R + 1) + dx + R]
                   * tex2D<float>(img, x + dx + 0.5f, y + dy + 0.5f);
    out[y * w + x] = sum;
}

__global__ void gather_global(const float* data, const int* idx, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = data[idx[i]];
}

__global__ void gather_texture(cudaTextureObject_t data, const int* idx, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex1Dfetch<float>(data, idx[i]);
}
