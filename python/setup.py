"""Build the lct package: a CPython extension over liblct.

liblct's sources (lib/, every layer but SQLite) are compiled into the
extension itself, position-independent, so the module carries the library
statically and needs only libbsd at run time.  Works with no package
index: `python3 -m pip install --no-build-isolation ./python`, or
`python3 setup.py build_ext --inplace`.
"""
import glob
import os
import shlex
import subprocess

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)


def pkg_config(*args):
    try:
        out = subprocess.run(["pkg-config", *args, "libbsd-overlay"],
                             check=True, capture_output=True, text=True)
        return shlex.split(out.stdout)
    except (OSError, subprocess.CalledProcessError):
        raise SystemExit("lct: pkg-config cannot find libbsd-overlay; "
                         "install libbsd-dev and pkg-config")


def relative(paths):
    # setuptools wants source paths relative to setup.py's folder
    return sorted(os.path.relpath(p, HERE) for p in paths)


LAYERS = ["base", "msgpack", "read", "render", "write", "lmcache"]
lib_sources = [p for layer in LAYERS
               for p in glob.glob(os.path.join(TOP, "lib", layer, "*.c"))]
if not lib_sources:
    raise SystemExit("lct: liblct's sources are not beside python/ "
                     "(build from the liblct source tree)")

extra = os.environ.get("LCT_PY_CFLAGS", "")
ext = Extension(
    "lct._lct",
    sources=relative(glob.glob(os.path.join(HERE, "src", "*.c"))) +
    relative(lib_sources),
    include_dirs=[os.path.join(TOP, "include"), os.path.join(TOP, "lib"),
                  os.path.join(HERE, "src")],
    define_macros=[("_DEFAULT_SOURCE", None), ("LIBBSD_NETBSD_VIS", None)],
    extra_compile_args=["-std=gnu11", "-pthread", "-Wall", "-Wextra",
                        "-Wno-missing-field-initializers",
                        "-Wno-cast-function-type"] +
    pkg_config("--cflags") + shlex.split(extra),
    extra_link_args=["-pthread"] + shlex.split(
        os.environ.get("LCT_PY_LDFLAGS", "")),
    libraries=["bsd", "m"],
)

setup(
    name="lct",
    version="0.1.0",
    description="Read LMCache trace files (.lct) at memory speed: "
                "liblct for Python",
    packages=["lct"],
    package_data={"lct": ["py.typed", "__init__.pyi"]},
    ext_modules=[ext],
    python_requires=">=3.9",
)
