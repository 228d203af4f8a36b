"""build_lct.py - how the lct package is built, with the standard library
alone: a PEP 517 build backend (what `pip install ./python` calls) and a
command for development builds (what `make python` and the tests call).

The extension is C over liblct; liblct's sources (lib/, every layer but
SQLite) are compiled into it, position-independent, with the compiler and
flags the interpreter was built with (sysconfig), so the module carries
the library statically and needs only libbsd at run time.  Nothing here
needs setuptools, wheel or a package index: the wheel is a zip file
written by zipfile, so the same command works in Debian's python3, in a
venv of it, and in an interpreter that has pip but no `wheel` (pyenv's).

    python3 -m pip install ./python                  # PEP 517, isolated
    python3 python/build_lct.py --build-lib DIR [--build-temp OBJDIR]
                        # the package into DIR (objects kept in OBJDIR)

LCT_PY_CFLAGS and LCT_PY_LDFLAGS add flags (the sanitizer builds' own).
"""
import base64
import concurrent.futures
import glob
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

NAME = "lct"
HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
LAYERS = ["base", "msgpack", "read", "render", "write", "lmcache"]
PACKAGE_FILES = ["__init__.py", "__init__.pyi", "dask.py", "py.typed"]


def version():
    """The library's version: LCT_VERSION_STRING in include/lct_core.h,
    the one place that says it (configure reads it there too)."""
    path = os.path.join(TOP, "include", "lct_core.h")
    with open(path, encoding="utf-8") as f:
        m = re.search(r'^#define LCT_VERSION_STRING "([0-9.]+)"$', f.read(),
                      re.M)
    if not m:
        raise SystemExit("lct: no LCT_VERSION_STRING in " + path)
    return m.group(1)


def _pkg_config(flag):
    try:
        out = subprocess.run(["pkg-config", flag, "libbsd-overlay"],
                             check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        raise SystemExit("lct: pkg-config cannot find libbsd-overlay; "
                         "install libbsd-dev and pkg-config")
    return shlex.split(out.stdout)


def _sources():
    lib = [p for layer in LAYERS
           for p in sorted(glob.glob(os.path.join(TOP, "lib", layer, "*.c")))]
    if not lib:
        raise SystemExit("lct: liblct's sources are not beside python/ "
                         "(build from the liblct source tree)")
    return sorted(glob.glob(os.path.join(HERE, "src", "*.c"))) + lib


def _compile(src, obj, cc, cflags):
    cmd = cc + cflags + ["-c", src, "-o", obj]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit("lct: compiling %s failed:\n%s\n%s"
                         % (os.path.relpath(src, TOP), " ".join(cmd),
                            run.stderr))
    return run.stderr  # warnings, shown once at the end


def build_extension(out_dir, objdir=None):
    """Compile and link lct/_lct into out_dir; its path.  The objects go
    to objdir, mirroring the source tree (src/x.o, lib/LAYER/x.o), kept
    when it is given (scripts/check-layers reads them), else to a
    temporary folder removed after."""
    cc = shlex.split(sysconfig.get_config_var("CC") or "cc")
    cflags = (shlex.split(sysconfig.get_config_var("CCSHARED") or "-fPIC") +
              ["-O2", "-g", "-std=gnu11", "-pthread", "-Wall", "-Wextra",
               "-Wno-missing-field-initializers", "-Wno-cast-function-type",
               "-D_DEFAULT_SOURCE", "-DLIBBSD_NETBSD_VIS",
               "-I" + sysconfig.get_paths()["include"],
               "-I" + os.path.join(TOP, "include"),
               "-I" + os.path.join(TOP, "lib"),
               "-I" + os.path.join(HERE, "src")] +
              _pkg_config("--cflags") +
              shlex.split(os.environ.get("LCT_PY_CFLAGS", "")))
    keep = objdir is not None
    objdir = objdir or tempfile.mkdtemp(prefix="lct-build-")
    try:
        sources = _sources()
        objects = []
        for s in sources:
            rel = os.path.relpath(s, HERE if s.startswith(HERE + os.sep) else TOP)
            objects.append(os.path.join(objdir, rel[:-2] + ".o"))
            os.makedirs(os.path.dirname(objects[-1]), exist_ok=True)
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
            warnings = list(pool.map(lambda so: _compile(so[0], so[1], cc, cflags),
                                     zip(sources, objects)))
        for w in warnings:
            if w:
                sys.stderr.write(w)
        target = os.path.join(out_dir, NAME,
                              "_lct" + sysconfig.get_config_var("EXT_SUFFIX"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        ldshared = shlex.split(sysconfig.get_config_var("LDSHARED") or
                               "cc -shared")
        # LDSHARED names the interpreter's own compiler: keep its flags,
        # use the compiler chosen above (CC may be overridden).
        link = (cc + ldshared[1:] + objects + ["-o", target, "-pthread"] +
                shlex.split(os.environ.get("LCT_PY_LDFLAGS", "")) +
                ["-lbsd", "-lm"])
        run = subprocess.run(link, capture_output=True, text=True)
        if run.returncode != 0:
            raise SystemExit("lct: linking failed:\n%s\n%s"
                             % (" ".join(link), run.stderr))
        return target
    finally:
        if not keep:
            shutil.rmtree(objdir, ignore_errors=True)


def build_package(out_dir, objdir=None):
    """The whole package (Python files and the extension) into out_dir."""
    os.makedirs(os.path.join(out_dir, NAME), exist_ok=True)
    for name in PACKAGE_FILES:
        shutil.copy2(os.path.join(HERE, NAME, name),
                     os.path.join(out_dir, NAME, name))
    build_extension(out_dir, objdir)


# MARK: PEP 517


def _tags():
    py = "cp%d%d" % sys.version_info[:2]
    if sys.implementation.name != "cpython":
        py = sys.implementation.cache_tag.replace("-", "_")
    plat = re.sub(r"[-.]", "_", sysconfig.get_platform())
    return py, py, plat


def _metadata():
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
            "Summary: Read LMCache trace files (.lct) at memory speed: "
            "liblct for Python\nRequires-Python: >=3.9\n"
            "Provides-Extra: tables\nRequires-Dist: numpy; extra == 'tables'\n"
            "Requires-Dist: pandas; extra == 'tables'\n" % (NAME, version()))


def _dist_info():
    return "%s-%s.dist-info" % (NAME, version())


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = os.path.join(metadata_directory, _dist_info())
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    return _dist_info()


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return "%s,sha256=%s,%d\n" % (arcname, digest.rstrip(b"=").decode(),
                                  len(data))


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    py, abi, plat = _tags()
    name = "%s-%s-%s-%s-%s.whl" % (NAME, version(), py, abi, plat)
    stage = tempfile.mkdtemp(prefix="lct-wheel-")
    try:
        build_package(stage)
        info = _dist_info()
        files = {}
        for root, _, names in os.walk(os.path.join(stage, NAME)):
            for n in sorted(names):
                path = os.path.join(root, n)
                with open(path, "rb") as f:
                    files[os.path.relpath(path, stage)] = f.read()
        files[info + "/METADATA"] = _metadata().encode()
        files[info + "/WHEEL"] = (
            "Wheel-Version: 1.0\nGenerator: build_lct\nRoot-Is-Purelib: false\n"
            "Tag: %s-%s-%s\n" % (py, abi, plat)).encode()
        files[info + "/top_level.txt"] = (NAME + "\n").encode()
        record = "".join(_record_line(a, d) for a, d in files.items())
        record += info + "/RECORD,,\n"
        os.makedirs(wheel_directory, exist_ok=True)
        with zipfile.ZipFile(os.path.join(wheel_directory, name), "w",
                             zipfile.ZIP_DEFLATED) as z:
            for arcname, data in files.items():
                z.writestr(arcname, data)
            z.writestr(info + "/RECORD", record)
        return name
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def build_sdist(sdist_directory, config_settings=None):
    raise SystemExit("lct: no source distribution of python/ alone: it is "
                     "built from the liblct source tree (make dist gives "
                     "the whole tree)")


def main(argv):
    opts = dict(zip(argv[1::2], argv[2::2]))
    if len(argv) % 2 == 0 or "--build-lib" not in opts or \
            set(opts) - {"--build-lib", "--build-temp"}:
        sys.stderr.write("usage: build_lct.py --build-lib DIR "
                         "[--build-temp OBJDIR]\n")
        return 2
    build_package(opts["--build-lib"], opts.get("--build-temp"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
