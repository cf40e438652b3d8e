/* rng.c — splitmix64 streams keyed by (seed, name, stream id) (see rng.h). */
#include "rng.h"

void a4w4_rng_init(a4w4_rng *r, uint64_t seed, const char *name, uint64_t stream)
{
    uint64_t h = 0xCBF29CE484222325ull; /* FNV-1a of the name */
    for (const char *p = name; *p; p++)
        h = (h ^ (uint8_t)*p) * 0x100000001B3ull;
    r->s = a4w4_rng_mix(seed ^ a4w4_rng_mix(h) ^ a4w4_rng_mix(stream * 0x9E3779B97F4A7C15ull + 1));
}
