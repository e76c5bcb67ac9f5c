"""Maps the `daemon/` and `gui/` folders to the import packages `intentd.daemon` and `intentd.gui`."""

from setuptools import find_packages, setup

FOLDERS = {"intentd.daemon": "daemon", "intentd.gui": "gui"}

packages = []
package_dir = {}
for name, folder in FOLDERS.items():
    packages.append(name)
    package_dir[name] = folder
    for sub in find_packages(folder):
        packages.append(f"{name}.{sub}")
        package_dir[f"{name}.{sub}"] = f"{folder}/{sub.replace('.', '/')}"

setup(packages=packages, package_dir=package_dir)
