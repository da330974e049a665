"""python_pytest.py: the Python package's pytest suite (python/tests) as one ctest test,
against this build's libcfx.so and the package's sources, or one example of python/examples.

    python3 tests/python_pytest.py LIBCFX SOURCE_DIR [EXAMPLE ARGS...]

Exits 77 (skipped) where pytest (for the suite) or numpy (for an example) is not installed:
`python3 -m pip install pytest numpy`. pytest's "no tests collected" is a failure.
"""
import importlib.util
import os
import subprocess
import sys


def main():
    lib, src = sys.argv[1], sys.argv[2]
    example = sys.argv[3:]
    need = "numpy" if example else "pytest"
    if importlib.util.find_spec(need) is None:
        print("%s is not installed: skipped (python3 -m pip install pytest numpy)" % need)
        return 77
    env = dict(os.environ, CFX_LIBRARY=lib, PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join([os.path.join(src, "python")] +
                                          ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    if example:
        cmd = [sys.executable, os.path.join(src, example[0])] + example[1:]
    else:
        cmd = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
               os.path.join(src, "python", "tests")]
    rc = subprocess.call(cmd, env=env, cwd=src)
    return 1 if rc == 5 and not example else rc


if __name__ == "__main__":
    sys.exit(main())
