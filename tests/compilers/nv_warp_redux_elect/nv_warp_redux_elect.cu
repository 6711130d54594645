// Warp reductions and matching on sm_90: __reduce_{add,min,max}_sync (signed and unsigned),
// __reduce_{and,or,xor}_sync, __match_any_sync, __match_all_sync, and elect.sync (libcu++'s
// cuda::ptx::elect_sync), over the full warp and over a half-warp membermask.
#include <cuda/ptx>

extern "C" __global__ void warp_redux_elect(const int* in, unsigned* out) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int x = in[g];
    unsigned u = (unsigned)x;
    unsigned* o = out + 12 * g;
    o[0] = (unsigned)__reduce_add_sync(0xffffffffu, x);
    o[1] = (unsigned)__reduce_min_sync(0xffffffffu, x);
    o[2] = (unsigned)__reduce_max_sync(0xffffffffu, x);
    o[3] = __reduce_min_sync(0xffffffffu, u);
    o[4] = __reduce_max_sync(0xffffffffu, u);
    o[5] = __reduce_and_sync(0xffffffffu, u);
    o[6] = __reduce_or_sync(0xffffffffu, u);
    o[7] = __reduce_xor_sync(0xffffffffu, u);
    o[8] = __match_any_sync(0xffffffffu, x & 3);
    int pred;
    unsigned all = __match_all_sync(0xffffffffu, x >> 30, &pred);
    o[9] = all ^ (unsigned)pred;
    bool leader = cuda::ptx::elect_sync(0xffffffffu);
    o[10] = leader ? 1000u + lane : 0u;
    if (lane >= 16) {
        o[11] = __reduce_add_sync(0xffff0000u, u) ^ (cuda::ptx::elect_sync(0xffff0000u) ? 0x80000000u : 0u);
    } else {
        o[11] = 0xdeadbeefu;
    }
}
