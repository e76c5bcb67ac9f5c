"""Which distribution package holds each system library Qt's platform plugins load."""

from __future__ import annotations

from pathlib import Path

# soname: (Debian/Ubuntu package, Fedora package). The libraries the xcb and wayland platform
# plugins of PySide6 load, directly or through each other; PySide6's own libQt6* are not here.
PACKAGES: dict[str, tuple[str, str]] = {
    "libxcb.so.1": ("libxcb1", "libxcb"),
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-ewmh.so.2": ("libxcb-ewmh2", "xcb-util-wm"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-render-util.so.0": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util"),
    "libxcb-glx.so.0": ("libxcb-glx0", "libxcb"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb"),
    "libxcb-xinput.so.0": ("libxcb-xinput0", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb"),
    "libX11.so.6": ("libx11-6", "libX11"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb"),
    "libXau.so.6": ("libxau6", "libXau"),
    "libXdmcp.so.6": ("libxdmcp6", "libXdmcp"),
    "libSM.so.6": ("libsm6", "libSM"),
    "libICE.so.6": ("libice6", "libICE"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libwayland-client.so.0": ("libwayland-client0", "libwayland-client"),
    "libwayland-cursor.so.0": ("libwayland-cursor0", "libwayland-cursor"),
    "libwayland-egl.so.1": ("libwayland-egl1", "libwayland-egl"),
    "libGL.so.1": ("libgl1", "libglvnd-glx"),
    "libGLX.so.0": ("libglx0", "libglvnd-glx"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl"),
    "libOpenGL.so.0": ("libopengl0", "libglvnd-opengl"),
    "libGLdispatch.so.0": ("libglvnd0", "libglvnd"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype"),
    "libpng16.so.16": ("libpng16-16", "libpng"),
    "libexpat.so.1": ("libexpat1", "expat"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs"),
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libgthread-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libz.so.1": ("zlib1g", "zlib"),
    "libzstd.so.1": ("libzstd1", "libzstd"),
}

DEBIAN, FEDORA = "debian", "fedora"
FAMILIES = {"debian": DEBIAN, "ubuntu": DEBIAN, "fedora": FEDORA, "rhel": FEDORA,
            "centos": FEDORA}


def distribution_family(os_release: Path = Path("/etc/os-release")) -> str | None:
    """"debian" or "fedora" when /etc/os-release names one of them (or a relative) in ID or
    ID_LIKE; None elsewhere."""
    try:
        text = os_release.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    names: list[str] = []
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() in ("ID", "ID_LIKE"):
            names.extend(value.strip().strip("\"'").lower().split())
    for name in names:
        if name in FAMILIES:
            return FAMILIES[name]
    return None


def install_line(missing: list[str], family: str | None) -> str:
    """The command that installs the packages of `missing`, for this distribution or, when it is
    neither a Debian nor a Fedora relative, for both; sonames no package here is known for are
    named for the person to look up."""
    debian = sorted({PACKAGES[name][0] for name in missing if name in PACKAGES})
    fedora = sorted({PACKAGES[name][1] for name in missing if name in PACKAGES})
    unknown = [name for name in missing if name not in PACKAGES]
    lines = []
    if debian and family in (DEBIAN, None):
        lines.append(f"`sudo apt install {' '.join(debian)}`"
                     + (" (Debian/Ubuntu)" if family is None else ""))
    if fedora and family in (FEDORA, None):
        lines.append(f"`sudo dnf install {' '.join(fedora)}`"
                     + (" (Fedora)" if family is None else ""))
    if unknown:
        lines.append(f"install the package that provides {', '.join(unknown)} (`apt-file search "
                     f"{unknown[0]}` or `dnf provides '*/{unknown[0]}'` finds it)")
    return "; ".join(lines)
