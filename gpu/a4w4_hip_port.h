/* a4w4_hip_port.h — one HIP source for both GPU vendors.
 *
 * On AMD (hipcc / __HIP_PLATFORM_AMD__) this includes <hip/hip_runtime.h> and nothing else.
 * On NVIDIA (nvcc, __CUDACC__) it maps the subset of the HIP runtime API the project uses
 * onto the CUDA runtime. Debian's HIP 5.2 NVIDIA-platform headers do not compile against
 * CUDA 13 (cudaDeviceProp fields and cudaMemAdvise signatures changed), hence this list.
 * Add a name here before using it in a .hip file.
 *
 * Also defines the IEEE-exact arithmetic the kernels rely on (no FMA contraction):
 *   A4W4_FADD(a, b)  fp32 add, round to nearest even
 *   A4W4_FMUL(a, b)  fp32 multiply, round to nearest even
 *   A4W4_FDIV(a, b)  fp32 divide, correctly rounded (subnormals kept)
 * NVIDIA device code: the __f*_rn intrinsics (never contracted); host code (the helpers are
 * also __host__, for CPU emulation tests): plain operators built with -ffp-contract=off. AMD: plain operators; the build passes
 * -ffp-contract=off and keeps fp32 denormals, and HIP's fp32 division is correctly rounded
 * unless fast-math is asked for (it never is here). */
#ifndef A4W4_HIP_PORT_H
#define A4W4_HIP_PORT_H

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__) || defined(__HIP__)
/* ------------------------------------------------------------------ AMD: real HIP --- */
#include <hip/hip_runtime.h>
#define A4W4_PLATFORM_NAME "amd"
#define A4W4_FADD(a, b) ((a) + (b))
#define A4W4_FMUL(a, b) ((a) * (b))
#define A4W4_FDIV(a, b) ((a) / (b))

#elif defined(__CUDACC__)
/* ---------------------------------------------------------------- NVIDIA: CUDA map --- */
#include <cuda_runtime.h>
#define A4W4_PLATFORM_NAME "nvidia"

typedef cudaError_t hipError_t;
typedef cudaStream_t hipStream_t;
typedef cudaEvent_t hipEvent_t;
typedef cudaDeviceProp hipDeviceProp_t;
typedef cudaMemcpyKind hipMemcpyKind;

#define hipSuccess cudaSuccess
#define hipErrorNoDevice cudaErrorNoDevice
#define hipErrorInsufficientDriver cudaErrorInsufficientDriver
#define hipErrorMemoryAllocation cudaErrorMemoryAllocation
#define hipErrorOutOfMemory cudaErrorMemoryAllocation
#define hipErrorInvalidValue cudaErrorInvalidValue
#define hipErrorInvalidConfiguration cudaErrorInvalidConfiguration
#define hipErrorLaunchFailure cudaErrorLaunchFailure

#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice

#define hipGetErrorString cudaGetErrorString
#define hipGetErrorName cudaGetErrorName
#define hipGetLastError cudaGetLastError
#define hipPeekAtLastError cudaPeekAtLastError
#define hipGetDeviceCount cudaGetDeviceCount
#define hipGetDevice cudaGetDevice
#define hipSetDevice cudaSetDevice
#define hipGetDeviceProperties cudaGetDeviceProperties
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipMalloc cudaMalloc
#define hipFree cudaFree
#define hipMemcpy cudaMemcpy
#define hipMemcpyAsync cudaMemcpyAsync
#define hipMemset cudaMemset
#define hipMemsetAsync cudaMemsetAsync
#define hipStreamSynchronize cudaStreamSynchronize
#define hipEventCreate cudaEventCreate
#define hipEventDestroy cudaEventDestroy
#define hipEventRecord cudaEventRecord
#define hipEventSynchronize cudaEventSynchronize
#define hipEventElapsedTime cudaEventElapsedTime

#define hipLaunchKernelGGL(kernel, grid, block, shmem, stream, ...) \
    kernel<<<(grid), (block), (shmem), (stream)>>>(__VA_ARGS__)

#if defined(__CUDA_ARCH__)
#define A4W4_FADD(a, b) __fadd_rn((a), (b))
#define A4W4_FMUL(a, b) __fmul_rn((a), (b))
#define A4W4_FDIV(a, b) __fdiv_rn((a), (b))
#else /* host pass (the helpers are __host__ __device__): SSE, built with -ffp-contract=off */
#define A4W4_FADD(a, b) ((a) + (b))
#define A4W4_FMUL(a, b) ((a) * (b))
#define A4W4_FDIV(a, b) ((a) / (b))
#endif

#else
#error "a4w4_hip_port.h: compile .hip sources with hipcc (AMD) or nvcc (NVIDIA)"
#endif

#endif
