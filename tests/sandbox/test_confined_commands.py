"""Commands the daemon runs are confined by the kernel: only writes in the intent's scope land."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from intentd.daemon.sandbox.landlock import kernel_abi
from tests.sandbox.conftest import Connect, approved_command

pytestmark = pytest.mark.skipif(kernel_abi() < 1, reason="needs a kernel with Landlock")

HELPER_C = r"""
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        int fd = open(argv[i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) { perror(argv[i]); continue; }
        write(fd, "x\n", 2);
        close(fd);
        printf("wrote %s\n", argv[i]);
    }
    return 0;
}
"""


def targets(outside: Path) -> list[str]:
    """In scope; out of scope in the workspace; outside it; the intents folder; git's folder."""
    return ["src/in.txt", "docs/out.txt", str(outside), ".orchestration/evil.yaml", ".git/evil"]


def write_targets_file(workspace: Path, outside: Path) -> str:
    """The targets in a file the command reads: what the command policy cannot see, a person
    approves."""
    (workspace / "src" / "targets").write_text("\n".join(targets(outside)) + "\n")
    return "src/targets"


def only_the_in_scope_write_exists(workspace: Path, outside: Path) -> None:
    assert (workspace / "src" / "in.txt").exists()
    assert not (workspace / "docs" / "out.txt").exists()
    assert not outside.exists()
    assert not (workspace / ".orchestration" / "evil.yaml").exists()
    assert not (workspace / ".git" / "evil").exists()


def test_bash_writes_only_inside_the_scope(connect: Connect, workspace: Path,
                                           tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    listing = write_targets_file(workspace, outside)
    (workspace / "src" / "write.sh").write_text(f'while read t; do echo x > "$t"; done < {listing}\n')
    answer = approved_command(connect, workspace, "bash src/write.sh")
    only_the_in_scope_write_exists(workspace, outside)
    output = answer["result"]["output"]
    assert output.count("Permission denied") == 4, output
    sandbox = answer["result"]["data"]["sandbox"]
    assert sandbox["confined"] and sandbox["writable"][0] == "src"


def test_python_writes_only_inside_the_scope(connect: Connect, workspace: Path,
                                             tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    listing = write_targets_file(workspace, outside)
    script = ("import sys\nfor p in open(sys.argv[1]).read().split():\n"
              "    try: open(p, 'w').write('x')\n    except OSError as e: print('refused', p)\n")
    answer = approved_command(connect, workspace, f"{sys.executable} -c \"{script}\" {listing}")
    only_the_in_scope_write_exists(workspace, outside)
    assert answer["result"]["output"].count("refused") == 4


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_a_compiled_program_writes_only_inside_the_scope(connect: Connect, workspace: Path,
                                                         tmp_path: Path) -> None:
    source, helper = tmp_path / "writer.c", tmp_path / "writer"
    source.write_text(HELPER_C)
    subprocess.run(["cc", "-o", str(helper), str(source)], check=True)
    outside = tmp_path / "outside.txt"
    listing = write_targets_file(workspace, outside)
    answer = approved_command(connect, workspace, f"xargs {helper} < {listing}")
    only_the_in_scope_write_exists(workspace, outside)
    assert answer["result"]["output"].count("Permission denied") == 4


def test_the_private_temp_folder_works_and_is_gone_after(connect: Connect, workspace: Path) -> None:
    (workspace / "src" / "tmp.sh").write_text(
        'echo t > "$TMPDIR/t" && cat "$TMPDIR/t" && echo "$TMPDIR" && echo quiet > /dev/null '
        '&& mkdir src/pkg && echo ok\n')
    answer = approved_command(connect, workspace, "bash src/tmp.sh")
    lines = answer["result"]["output"].splitlines()
    assert lines[0] == "t" and lines[2] == "ok", lines
    deadline = time.monotonic() + 5
    while Path(lines[1]).exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not Path(lines[1]).exists(), "the per-command temp folder is removed"
    assert (workspace / "src" / "pkg").is_dir()


def test_git_and_the_persons_files_stay_closed_with_the_whole_workspace_in_scope(
        connect: Connect, tmp_path: Path) -> None:
    from tests.sandbox.conftest import git_workspace

    workspace = git_workspace(tmp_path / "all", ["**"])
    (workspace / "src").mkdir(exist_ok=True)
    (workspace / ".clineignore").write_text("secrets/\n")
    (workspace / "src" / "try.sh").write_text(
        "echo x > docs/ok.md; echo y > .git/evil; mv .git moved; rm -r .orchestration; "
        "echo > .clineignore\n")
    answer = approved_command(connect, workspace, "bash src/try.sh")
    assert (workspace / "docs" / "ok.md").exists()
    assert (workspace / ".git" / "HEAD").exists() and not (workspace / "moved").exists()
    assert not (workspace / ".git" / "evil").exists()
    assert (workspace / ".orchestration" / "active_intents.yaml").exists()
    assert (workspace / ".clineignore").read_text() == "secrets/\n", "the access rules stay"
    assert answer["result"]["output"].count("ermission denied") >= 4
