// CUDA source compiled by clang-16 (LLVM 16 NVPTX backend), no CUDA SDK. clang-16 still
// rejects scalar _Float16 for NVPTX, so the halves use the _Float16 vector extension.
// prod = alpha * x (mul.f16x2), sum = x + y (add.f16x2), y = alpha * x + y (clang's default
// -ffp-contract=fast fuses this one into fma.rn.f16x2 even though the product is also stored).
#define __global__ __attribute__((global))
typedef _Float16 half2 __attribute__((ext_vector_type(2)));

extern "C" __global__ void cl16_f16_axpy(int n2, half2 alpha, const half2* __restrict__ x,
                                         half2* __restrict__ y, half2* __restrict__ prod,
                                         half2* __restrict__ sum) {
  int i = __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() + __nvvm_read_ptx_sreg_tid_x();
  if (i >= n2) return;
  half2 xi = x[i], yi = y[i];
  half2 p = alpha * xi;
  prod[i] = p;
  sum[i] = xi + yi;
  y[i] = p + yi;
}
