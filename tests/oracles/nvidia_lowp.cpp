// Digests of NVIDIA's own host implementations of the low-precision conversions (cuda_fp8.hpp,
// cuda_fp6.hpp, cuda_fp4.hpp of CUDA 13), over every 16-bit input and a 393,216-value sample of
// f32 inputs. `tests/lowp_conversions.rs` computes the same tables from ptxjit's reference
// (`semantics::minifloat`) and compares the digests. Regenerate (needs the CUDA headers, e.g.
// `pip install nvidia-cuda-runtime nvidia-cuda-nvcc`):
//
//   g++ -std=c++17 -O1 -I$CUDA_INCLUDE tests/oracles/nvidia_lowp.cpp -o /tmp/lowp && /tmp/lowp \
//     > tests/oracles/nvidia_lowp.digests
//
// A digest is FNV-1a (64-bit) over the outputs in input order, little-endian, each output
// as many bytes as its format (1 for the narrow formats, 2 for f16/bf16).
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

// With an argument, the table of that name is printed too (one output per line, in hex).
static const char *dump = nullptr;

struct Fnv {
    uint64_t h = 0xcbf29ce484222325ULL;
    bool print = false;
    void byte(uint8_t b) {
        h = (h ^ b) * 0x100000001b3ULL;
        if (print) std::fprintf(stderr, "%02x\n", b);
    }
    void u16(uint16_t v) { byte(v & 0xFF); byte(v >> 8); }
    explicit Fnv(const char *name) : print(dump && !std::strcmp(dump, name)) {}
};

static std::vector<uint32_t> f32_sample() {
    static const uint32_t lows[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF};
    std::vector<uint32_t> s;
    for (uint32_t hi = 0; hi < 0x10000; hi++)
        for (uint32_t lo : lows) s.push_back(hi << 16 | lo);
    return s;
}

static float as_float(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

static void narrow(const char *name, uint32_t inputs, std::function<uint8_t(uint32_t)> f) {
    Fnv d(name);
    for (uint32_t i = 0; i < inputs; i++) d.byte(f(i));
    std::printf("%s %016llx\n", name, (unsigned long long)d.h);
}

static void narrow_f32(const char *name, std::function<uint8_t(float)> f) {
    Fnv d(name);
    for (uint32_t u : f32_sample()) d.byte(f(as_float(u)));
    std::printf("%s %016llx\n", name, (unsigned long long)d.h);
}

static void widen(const char *name, uint32_t inputs, std::function<uint16_t(uint32_t)> f) {
    Fnv d(name);
    for (uint32_t i = 0; i < inputs; i++) d.u16(f(i));
    std::printf("%s %016llx\n", name, (unsigned long long)d.h);
}

static __half_raw hr(uint32_t i) { __half_raw r; r.x = (unsigned short)i; return r; }
static __nv_bfloat16_raw br(uint32_t i) { __nv_bfloat16_raw r; r.x = (unsigned short)i; return r; }

int main(int argc, char **argv) {
    if (argc > 1) dump = argv[1];
    const struct { const char *n; __nv_fp8_interpretation_t k; } fp8[] = {{"e4m3", __NV_E4M3}, {"e5m2", __NV_E5M2}};
    const struct { const char *n; __nv_fp6_interpretation_t k; } fp6[] = {{"e2m3", __NV_E2M3}, {"e3m2", __NV_E3M2}};
    const struct { const char *n; cudaRoundMode m; } modes[] = {{"rn", cudaRoundNearest}, {"rz", cudaRoundZero}};
    char name[96];
    for (auto f : fp8) {
        auto k = f.k;
        std::snprintf(name, sizeof name, "%s.from_f16.rn", f.n);
        narrow(name, 0x10000, [k](uint32_t i) { return __nv_cvt_halfraw_to_fp8(hr(i), __NV_SATFINITE, k); });
        std::snprintf(name, sizeof name, "%s.from_bf16.rn", f.n);
        narrow(name, 0x10000, [k](uint32_t i) { return __nv_cvt_bfloat16raw_to_fp8(br(i), __NV_SATFINITE, k); });
        std::snprintf(name, sizeof name, "%s.from_f32.rn", f.n);
        narrow_f32(name, [k](float x) { return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, k); });
        std::snprintf(name, sizeof name, "%s.to_f16", f.n);
        widen(name, 0x100, [k](uint32_t i) { return __nv_cvt_fp8_to_halfraw((uint8_t)i, k).x; });
        std::snprintf(name, sizeof name, "%s.to_bf16", f.n);
        widen(name, 0x100, [k](uint32_t i) { return __nv_cvt_fp8_to_bf16raw((uint8_t)i, k).x; });
    }
    for (auto m : modes) {
        auto mode = m.m;
        for (auto f : fp6) {
            auto k = f.k;
            std::snprintf(name, sizeof name, "%s.from_f16.%s", f.n, m.n);
            narrow(name, 0x10000, [k, mode](uint32_t i) { return __nv_cvt_halfraw_to_fp6(hr(i), k, mode); });
            std::snprintf(name, sizeof name, "%s.from_bf16.%s", f.n, m.n);
            narrow(name, 0x10000, [k, mode](uint32_t i) { return __nv_cvt_bfloat16raw_to_fp6(br(i), k, mode); });
            std::snprintf(name, sizeof name, "%s.from_f32.%s", f.n, m.n);
            narrow_f32(name, [k, mode](float x) { return __nv_cvt_float_to_fp6(x, k, mode); });
        }
        std::snprintf(name, sizeof name, "e2m1.from_f16.%s", m.n);
        narrow(name, 0x10000, [mode](uint32_t i) { return __nv_cvt_halfraw_to_fp4(hr(i), __NV_E2M1, mode); });
        std::snprintf(name, sizeof name, "e2m1.from_bf16.%s", m.n);
        narrow(name, 0x10000, [mode](uint32_t i) { return __nv_cvt_bfloat16raw_to_fp4(br(i), __NV_E2M1, mode); });
        std::snprintf(name, sizeof name, "e2m1.from_f32.%s", m.n);
        narrow_f32(name, [mode](float x) { return __nv_cvt_float_to_fp4(x, __NV_E2M1, mode); });
    }
    for (auto f : fp6) {
        auto k = f.k;
        std::snprintf(name, sizeof name, "%s.to_f16", f.n);
        widen(name, 0x40, [k](uint32_t i) { return __nv_cvt_fp6_to_halfraw((uint8_t)i, k).x; });
        std::snprintf(name, sizeof name, "%s.to_bf16", f.n);
        widen(name, 0x40, [k](uint32_t i) { return __nv_cvt_fp6_to_bf16raw((uint8_t)i, k).x; });
    }
    widen("e2m1.to_f16", 0x10, [](uint32_t i) { return __nv_cvt_fp4_to_halfraw((uint8_t)i, __NV_E2M1).x; });
    widen("e2m1.to_bf16", 0x10, [](uint32_t i) { return __nv_cvt_fp4_to_bf16raw((uint8_t)i, __NV_E2M1).x; });
    const struct { const char *n; cudaRoundMode m; } e8_modes[] = {{"rz", cudaRoundZero}, {"rp", cudaRoundPosInf}};
    const struct { const char *n; __nv_saturation_t s; } sats[] = {{"", __NV_NOSAT}, {".satfinite", __NV_SATFINITE}};
    for (auto m : e8_modes) {
        for (auto s : sats) {
            auto mode = m.m;
            auto sat = s.s;
            std::snprintf(name, sizeof name, "ue8m0.from_bf16.%s%s", m.n, s.n);
            narrow(name, 0x10000, [mode, sat](uint32_t i) { return __nv_cvt_bfloat16raw_to_e8m0(br(i), sat, mode); });
            std::snprintf(name, sizeof name, "ue8m0.from_f32.%s%s", m.n, s.n);
            narrow_f32(name, [mode, sat](float x) { return __nv_cvt_float_to_e8m0(x, sat, mode); });
        }
    }
    widen("ue8m0.to_bf16", 0x100, [](uint32_t i) { return __nv_cvt_e8m0_to_bf16raw((uint8_t)i).x; });
    return 0;
}
