// aos_soa.cu -- array of structures versus structure of arrays.
//
// Demonstrates: seed 001 ("Device memory access & conflicts": uncoalesced access with an
// array of structures `struct data { int index; double value; }`, coalesced access with a
// structure of arrays).  sizeof(data) == 16 (4 bytes of padding after `index`), so in the
// AoS kernel a warp's 4-byte `index` loads are 16 bytes apart (16 sectors/request on CC 9.0
// instead of 4) and its 8-byte `value` loads are also 16 bytes apart (16 sectors instead of 8).
//
// warpscope analyze examples/aos_soa.cu --kernel aos --grid 4096 --block 256 --arg n=1048576
// warpscope analyze examples/aos_soa.cu --kernel soa --grid 4096 --block 256 --arg n=1048576
// warpscope analyze examples/aos_soa.cu --kernel aos_update --grid 4096 --block 256 --arg n=1048576
//
// Allocations used for tests/data/h100/examples.csv: myData n structs (16 MiB), index n ints,
// value n doubles, result n doubles, with n = 1048576.

struct data {
    int index;
    double value;
};

// in kernel: idx = blockDim.x * blockIdx.x + threadIdx.x;
//            int a = myData[idx].index; double b = myData[idx].value;
__global__ void aos(const data* myData, double* result, int n)
{
    int idx = blockDim.x * blockIdx.x + threadIdx.x;
    if (idx < n) {
        int a = myData[idx].index;
        double b = myData[idx].value;
        result[idx] = b + a;
    }
}

// in kernel: int a = myData.index[idx]; double b = myData.value[idx];
__global__ void soa(const int* index, const double* value, double* result, int n)
{
    int idx = blockDim.x * blockIdx.x + threadIdx.x;
    if (idx < n) {
        int a = index[idx];
        double b = value[idx];
        result[idx] = b + a;
    }
}

// Writing a field of the structure in place: the 8-byte stores are 16 bytes apart too.
__global__ void aos_update(data* myData, int n)
{
    int idx = blockDim.x * blockIdx.x + threadIdx.x;
    if (idx < n) {
        myData[idx].value = myData[idx].value + myData[idx].index;
    }
}
