"""AITER's dtype names: the torch fp4x2 / e8m0 dtypes where this torch has them, else uint8."""
import torch

fp4x2 = getattr(torch, "float4_e2m1fn_x2", torch.uint8)
fp8_e8m0 = getattr(torch, "float8_e8m0fnu", torch.uint8)
