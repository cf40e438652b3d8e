/* a4w4_judge_port.h — the GPU runtime names the judge uses, on both vendors (ref/gpu only).
 *
 * AMD (hipcc): <hip/hip_runtime.h> as is. NVIDIA (nvcc): the few HIP names the judge uses,
 * mapped onto the CUDA runtime. Written for the judge alone: it shares nothing with gpu/
 * (a judge that reuses what it judges repeats its bugs).
 *
 * Exact fp32 / fp64 arithmetic (no FMA contraction; the build also passes --fmad=false or
 * -ffp-contract=off and keeps denormals): J_FADD, J_DADD, J_DMUL, J_DDIV round to nearest
 * even; J_DADD_RU / J_DSUB_RD round up / down (the tail bounds of a4w4_judge_math.h). On the
 * host pass (CPU emulation tests) the directed forms use fesetround. */
#ifndef A4W4_JUDGE_PORT_H
#define A4W4_JUDGE_PORT_H

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__) || defined(__HIP__)
#include <hip/hip_runtime.h>
#define A4W4J_AMD 1
#elif defined(__CUDACC__)
#include <cuda_runtime.h>
typedef cudaError_t hipError_t;
typedef cudaStream_t hipStream_t;
#define hipSuccess cudaSuccess
#define hipErrorMemoryAllocation cudaErrorMemoryAllocation
#define hipGetErrorString cudaGetErrorString
#define hipGetLastError cudaGetLastError
#define hipGetDeviceCount cudaGetDeviceCount
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipMalloc cudaMalloc
#define hipFree cudaFree
#define hipMemcpy cudaMemcpy
#define hipMemset cudaMemset
#define hipMemGetInfo cudaMemGetInfo
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define hipLaunchKernelGGL(kernel, grid, block, shmem, stream, ...) \
    kernel<<<(grid), (block), (shmem), (stream)>>>(__VA_ARGS__)
#else
#error "a4w4_judge_port.h: compile the judge with hipcc (AMD) or nvcc (NVIDIA)"
#endif

#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define A4W4J_DEVICE_PASS 1
#endif

#define A4W4J_HD static __host__ __device__ __forceinline__

#if defined(__CUDA_ARCH__)
#define J_FADD(a, b) __fadd_rn((a), (b))
#define J_DADD(a, b) __dadd_rn((a), (b))
#define J_DMUL(a, b) __dmul_rn((a), (b))
#define J_DDIV(a, b) __ddiv_rn((a), (b))
#define J_D2F(x) __double2float_rn(x)
#else /* AMD device code and the host: plain operators, -ffp-contract=off */
#define J_FADD(a, b) ((a) + (b))
#define J_DADD(a, b) ((a) + (b))
#define J_DMUL(a, b) ((a) * (b))
#define J_DDIV(a, b) ((a) / (b))
#define J_D2F(x) ((float)(x))
#endif

#endif
