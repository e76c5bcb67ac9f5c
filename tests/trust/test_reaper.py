"""The subreaper keeps double-forked orphans below it, reaps them, and never steals an exit code."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = r'''
import json, os, subprocess, time
from intentd.daemon.trust.reaper import _children, reap_orphans, start_reaping

assert start_reaping() is not None
# an orphan: the command exits at once, its background child is handed to us
done = subprocess.Popen(["bash", "-c", "(sleep 0.3 &); exit 3"]).wait()
adopted = subprocess.run(["bash", "-c", "sleep 0.1 & echo $!"], capture_output=True,
                         text=True).stdout.strip()
orphan_parent = open(f"/proc/{adopted}/stat").read().rsplit(")", 1)[1].split()[1]
time.sleep(0.6)
zombies_before = len(_children())
# a child of ours that exited but that subprocess has not waited for yet
waiting = subprocess.Popen(["bash", "-c", "exit 4"])
time.sleep(0.3)
reaped = reap_orphans()
print(json.dumps({"exit": done, "orphan_parent": int(orphan_parent), "me": os.getpid(),
                  "zombies_before": zombies_before, "reaped": reaped,
                  "waited": waiting.wait(), "left": len(_children())}))
'''


def test_orphans_come_to_us_are_reaped_and_exit_codes_survive() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["exit"] == 3
    assert found["orphan_parent"] == found["me"], "the orphan was handed to the subreaper"
    assert found["zombies_before"] == 2 and found["reaped"] == 2
    assert found["waited"] == 4, "a child subprocess waits for keeps its exit code"
    assert found["left"] == 0
