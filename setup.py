"""Maps the `daemon/` and `gui/` folders to the import packages `intentd.daemon` and `intentd.gui`,
and builds the checkpoints' native tree listing where it can."""

import sys

from setuptools import Extension, find_packages, setup

FOLDERS = {"intentd.daemon": "daemon", "intentd.gui": "gui"}

packages = []
package_dir = {}
for name, folder in FOLDERS.items():
    packages.append(name)
    package_dir[name] = folder
    for sub in find_packages(folder):
        packages.append(f"{name}.{sub}")
        package_dir[f"{name}.{sub}"] = f"{folder}/{sub.replace('.', '/')}"

# The full-scan fallback lists the tree in C where this builds (Linux, a C compiler and Python's
# headers); optional, so that an install without a compiler still works, with GNU find listing.
ext_modules = []
if sys.platform.startswith("linux"):
    ext_modules.append(Extension("intentd.daemon.checkpoints._listing",
                                 ["daemon/checkpoints/_listing.c"], optional=True))

setup(packages=packages, package_dir=package_dir, ext_modules=ext_modules)
