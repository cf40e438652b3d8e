"""a4w4check.layouts: the byte permutations the AITER ASM path consumes (contracts §3), in their
view/permute form on numpy uint8 arrays. Each returns a new C-contiguous array."""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

U8 = npt.NDArray[np.uint8]


def round_up(x: int, m: int) -> int:
    """x rounded up to a multiple of m (m > 0)."""
    return (x + m - 1) // m * m


def preshuffle_supported(N: int, K: int) -> bool:
    """contracts §3.1: N % 16 == 0 and (K/2) % 32 == 0."""
    return N % 16 == 0 and (K // 2) % 32 == 0


def swizzle_supported(rows: int, cols: int) -> bool:
    """contracts §3.2: rows % 32 == 0 and cols % 8 == 0 (weight scale [N, K/32])."""
    return rows % 32 == 0 and cols % 8 == 0


def shuffle_weight(w: npt.ArrayLike) -> U8:
    """contracts §3.1, shuffle_weight(w, layout=(16, 16)): packed weight bytes uint8 [N, K/2] ->
    the same shape, as the view (N/16, 16, Kb/32, 2, 16) permuted (0, 2, 3, 1, 4).
    Raises ValueError unless N % 16 == 0 and Kb % 32 == 0."""
    w = np.asarray(w, dtype=np.uint8)
    N, Kb = w.shape
    if N % 16 or Kb % 32:
        raise ValueError(f"shuffle_weight needs N % 16 == 0 and K/2 % 32 == 0, got [{N}, {Kb}]")
    v = w.reshape(N // 16, 16, Kb // 32, 2, 16).transpose(0, 2, 3, 1, 4)
    return np.ascontiguousarray(v).reshape(N, Kb)


def swizzle_scale(s: npt.ArrayLike) -> U8:
    """contracts §3.2, _swizzle_asm_fp4_scale: E8M0 uint8 [rows, cols] -> the same shape, as the
    view (rows/32, 2, 16, cols/8, 2, 4) permuted (0, 3, 5, 2, 4, 1).
    Raises ValueError unless rows % 32 == 0 and cols % 8 == 0."""
    s = np.asarray(s, dtype=np.uint8)
    if s.ndim != 2 or not swizzle_supported(*s.shape):
        raise ValueError(f"scale swizzle needs a 2-D [rows % 32 == 0, cols % 8 == 0] tensor, "
                         f"got {list(s.shape)}")
    rows, cols = s.shape
    v = s.reshape(rows // 32, 2, 16, cols // 8, 2, 4).transpose(0, 3, 5, 2, 4, 1)
    return np.ascontiguousarray(v).reshape(rows, cols)


def shuffle_act_scale(s: npt.ArrayLike, row_fill: int = 0x7F, col_fill: int = 0x7F) -> U8:
    """contracts §3.3, _shuffle_asm_fp4_act_scale: E8M0 uint8 [M, K/32] -> padded to
    [round_up(M, 256), round_up(K/32, 8)] (pad rows filled with row_fill, pad columns of the
    valid rows with col_fill; SGLang fills 0x7F on both) and swizzled (§3.2)."""
    s = np.asarray(s, dtype=np.uint8)
    M, nb = s.shape
    padded = np.full((round_up(M, 256), round_up(nb, 8)), row_fill, dtype=np.uint8)
    padded[:M, :] = col_fill
    padded[:M, :nb] = s
    return swizzle_scale(padded)
