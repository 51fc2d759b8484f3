"""Builds libcarillonc.so (the Swift package's `carillonc` product, one folder up)
and ships it inside the `carillon` package: the wheel is platform-specific."""
import os
import shlex
import shutil
import subprocess
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

LIBRARY = "libcarillonc.so"


def swift_package() -> Path:
    """The Swift package: $CARILLON_SWIFT_PACKAGE, else the checkout this folder is in."""
    root = Path(os.environ.get("CARILLON_SWIFT_PACKAGE", Path(__file__).resolve().parent.parent))
    if not (root / "Package.swift").is_file():
        raise SystemExit(f"carillon: no Package.swift in {root}: install from the Carillon checkout "
                         "(pip install ./python) or set CARILLON_SWIFT_PACKAGE")
    return root


class BuildWithSwift(build_py):
    def run(self):
        super().run()
        root = swift_package()
        # Release unless told: scripts/test passes its own CARILLON_BUILD_FLAGS, so nothing is built twice.
        flags = shlex.split(os.environ.get("CARILLON_BUILD_FLAGS", "-c release"))
        command = ["swift", "build", *flags, "--product", "carillonc"]
        if shutil.which("swift") is None:
            raise SystemExit("carillon: the Swift toolchain (swift) is not on PATH; scripts/setup installs it")
        subprocess.run(command, cwd=root, check=True)
        path = subprocess.run(command + ["--show-bin-path"], cwd=root, check=True, capture_output=True,
                              text=True).stdout.strip()
        built = Path(path) / LIBRARY
        if not built.is_file():
            raise SystemExit(f"carillon: swift build made no {built}")
        target = Path(self.build_lib) / "carillon" / LIBRARY
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, target)


class BinaryDistribution(Distribution):
    """The package holds a native library: a platform wheel, not a pure one."""
    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithSwift}, distclass=BinaryDistribution)
