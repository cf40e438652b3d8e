"""setup.py: the one build step pyproject.toml's setuptools cannot say declaratively: the C
library the in-process judge loads (liba4w4check, docs/api.md) and the case files, copied
into the package (a4w4check/liba4w4check.so, a4w4check/cases/), so that `pip install ./python`
gives a package that judges without the repository.

The library is found or built, in this order:
  $A4W4CHECK_LIB             a liba4w4check.so already built
  python/../build            the repository's build tree, when it holds liba4w4check.so
  the repository's CMake     python/.. holds CMakeLists.txt: `cmake -S .. -B <temp>
                             -DBUILD_TESTING=OFF` and `cmake --build <temp> --target
                             a4w4check_api` ($CMAKE_C_COMPILER_LAUNCHER, e.g. ccache, is
                             honoured by CMake itself)
Neither: the build stops with one line saying so. The case files come from
$A4W4CHECK_SOURCE/cases or python/../cases. docs/bridge.md says why setuptools (Debian 12 has
it and no scikit-build-core; meson-python would need a second build of the C code).
"""
import glob
import os
import shutil
import subprocess
import tempfile

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
CASE_FILES = ("premerge.csv", "premerge-quick.csv", "edge.csv", "nightly.csv", "hazard.csv",
              "NOTICE", "aiter/op_test_gemm_a4w4_shapes.csv",
              "aiter/dsv3_a4w4_blockscale_tuned_gemm.csv")


def _source() -> str:
    return os.environ.get("A4W4CHECK_SOURCE") or os.path.dirname(HERE)


def _cmake_build(src: str) -> str:
    """Build liba4w4check from the repository at src; its path."""
    out = tempfile.mkdtemp(prefix="a4w4check-lib-")
    run = dict(check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "-S", src, "-B", out, "-DBUILD_TESTING=OFF",
                    "-DCMAKE_BUILD_TYPE=Release"], **run)
    subprocess.run(["cmake", "--build", out, "--target", "a4w4check_api", "-j",
                    str(os.cpu_count() or 2)], **run)
    return os.path.join(out, "liba4w4check.so")


def _library() -> str:
    lib = os.environ.get("A4W4CHECK_LIB")
    if lib:
        if not os.path.isfile(lib):
            raise SystemExit(f"a4w4check: A4W4CHECK_LIB={lib}: no such file")
        return lib
    src = _source()
    built = os.path.join(src, "build", "liba4w4check.so")
    if os.path.isfile(built):
        return built
    if os.path.isfile(os.path.join(src, "CMakeLists.txt")) and shutil.which("cmake"):
        return _cmake_build(src)
    raise SystemExit("a4w4check: no liba4w4check to install: set A4W4CHECK_LIB to a built "
                     "liba4w4check.so, or install from the repository with cmake present "
                     "(python/.. holds CMakeLists.txt)")


class BuildWithLibrary(build_py):  # type: ignore[misc]
    """build_py, then the library and the case files into the built package."""

    def run(self) -> None:
        super().run()
        pkg = os.path.join(self.build_lib, "a4w4check")
        shutil.copyfile(os.path.realpath(_library()), os.path.join(pkg, "liba4w4check.so"))
        cases = os.path.join(_source(), "cases")
        for rel in CASE_FILES:
            dst = os.path.join(pkg, "cases", rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(os.path.join(cases, rel), dst)
        assert glob.glob(os.path.join(pkg, "cases", "*.csv"))


class BinaryDistribution(Distribution):  # type: ignore[misc]
    """A wheel holding a shared library is for this platform only."""

    def has_ext_modules(self) -> bool:
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
