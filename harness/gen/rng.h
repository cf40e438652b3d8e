/* rng.h — the harness's seeded random streams: splitmix64 keyed by (seed, name, stream id),
 * so that every row, sample or table draws from a stream of its own and never depends on
 * what other streams drew. Used by the generator (gen*), discover's grids and the layer
 * model; a case's operands are a function of its seed and name alone. */
#ifndef A4W4_RNG_H
#define A4W4_RNG_H

#include <stdint.h>

/* splitmix64 stream seeded by (seed, name, stream id). */
typedef struct {
    uint64_t s;
} a4w4_rng;

/* splitmix64's finalizer: a 64-bit value to a well-mixed one (a bijection). Inline: the
 * generator's fill loops call it per 64-bit draw. */
static inline uint64_t a4w4_rng_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Seed r from seed, the FNV-1a hash of the NUL-terminated name and stream (any value). */
void a4w4_rng_init(a4w4_rng *r, uint64_t seed, const char *name, uint64_t stream);

/* The stream's next 64-bit value (state + 0x9E3779B97F4A7C15, mixed). */
static inline uint64_t a4w4_rng_next(a4w4_rng *r)
{
    r->s += 0x9E3779B97F4A7C15ull;
    return a4w4_rng_mix(r->s);
}

#endif
