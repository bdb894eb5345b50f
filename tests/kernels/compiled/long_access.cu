// An access whose text (87 characters) is longer than the table's access column (48).
__global__ void long_access(const float* values_of_the_input_array, float* out, int offset_into_the_array)
{
    out[threadIdx.x] = values_of_the_input_array[blockIdx.x * blockDim.x + threadIdx.x + offset_into_the_array];
}
