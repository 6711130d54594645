// 128-bit integer arithmetic: unsigned __int128 add, subtract and multiply, and a 128x128 ->
// 256-bit schoolbook multiply on 32-bit limbs with mad.lo.cc / madc.hi chains in inline PTX,
// as multi-precision libraries write it.
typedef unsigned __int128 u128;

__device__ void mul_limbs(const unsigned* x, const unsigned* y, unsigned* r) {
    for (int k = 0; k < 8; k++) r[k] = 0;
    for (int i = 0; i < 4; i++) {
        unsigned carry = 0;
        // r[i..i+5] += x * y[i]
        asm("mad.lo.cc.u32 %0, %5, %6, %0;\n\t"
            "madc.hi.cc.u32 %1, %5, %6, %1;\n\t"
            "addc.cc.u32 %2, %2, 0;\n\t"
            "addc.cc.u32 %3, %3, 0;\n\t"
            "addc.cc.u32 %4, %4, 0;\n\t"
            : "+r"(r[i]), "+r"(r[i + 1]), "+r"(r[i + 2]), "+r"(r[i + 3]), "+r"(r[i + 4])
            : "r"(x[0]), "r"(y[i]));
        for (int j = 1; j < 4; j++) {
            asm("mad.lo.cc.u32 %0, %3, %4, %0;\n\t"
                "madc.hi.cc.u32 %1, %3, %4, %1;\n\t"
                "addc.u32 %2, 0, 0;\n\t"
                : "+r"(r[i + j]), "+r"(r[i + j + 1]), "=r"(carry)
                : "r"(x[j]), "r"(y[i]));
            for (int k = i + j + 2; k < 8 && carry; k++) {
                asm("add.cc.u32 %0, %0, %2;\n\taddc.u32 %1, 0, 0;" : "+r"(r[k]), "=r"(carry) : "r"(carry));
            }
        }
    }
}

extern "C" __global__ void mul128(const unsigned long long* a, const unsigned long long* b,
                                  unsigned long long* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    u128 x = ((u128)a[2 * i + 1] << 64) | a[2 * i];
    u128 y = ((u128)b[2 * i + 1] << 64) | b[2 * i];
    u128 p = x * y, s = x + y, d = x - y;
    unsigned xl[4], yl[4], r[8];
    for (int k = 0; k < 4; k++) {
        xl[k] = (unsigned)(x >> (32 * k));
        yl[k] = (unsigned)(y >> (32 * k));
    }
    mul_limbs(xl, yl, r);
    unsigned long long* o = out + 10 * i;
    o[0] = (unsigned long long)p; o[1] = (unsigned long long)(p >> 64);
    o[2] = (unsigned long long)s; o[3] = (unsigned long long)(s >> 64);
    o[4] = (unsigned long long)d; o[5] = (unsigned long long)(d >> 64);
    for (int k = 0; k < 4; k++) o[6 + k] = (unsigned long long)r[2 * k] | (unsigned long long)r[2 * k + 1] << 32;
}
