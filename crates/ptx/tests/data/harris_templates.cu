// examples/harris.cu with its template kernels instantiated, so the PTX has `offset<float>`,
// `offset<double>`, `stride<float>` and `stride<double>` entries.
#include "../../../../examples/harris.cu"

template __global__ void offset<float>(float*, int);
template __global__ void offset<double>(double*, int);
template __global__ void stride<float>(float*, int);
template __global__ void stride<double>(double*, int);
