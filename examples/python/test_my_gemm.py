import a4w4check
import my_kernel


@a4w4check.cases("premerge-quick")
def test_my_gemm(case):
    a4w4check.assert_bitexact(my_kernel.gemm, case)
