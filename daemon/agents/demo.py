"""`intentd demo`: a scripted agent session in a temporary workspace, no API key needed."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from intentd.daemon.agents.approval_watch import ApprovalWatcher, announce, approve_as
from intentd.daemon.agents.calls import CallResult, preview
from intentd.daemon.agents.gateway import Gateway, GatewayError, open_gateway

INTENT = {"id": "DEMO-1", "name": "Add a greeting module", "status": "IN_PROGRESS",
          "owned_scope": ["src/**"], "constraints": ["Keep the greeting in English."],
          "acceptance_criteria": ["src/greet.py defines greet()."]}
GREET = 'def greet(name: str) -> str:\n    return f"Hello, {name}!"\n'
# a program writing outside the scope, where parsing cannot see it (a build script, say)
SNEAKY = "python3 -c \"open('README.md', 'a').write('changed by a build step')\""
REPETITION_LIMIT = 3
SCRIPT = "the demo script"


def make_demo_workspace(root: Path) -> Path:
    """The demo's workspace: the intent it works on, an old completed one, a policy, two files."""
    old = {**INTENT, "id": "DEMO-0", "name": "An old task", "status": "COMPLETED"}
    policy = {"auto_approve": {"read": True, "edit": False},
              "repetition": {"limit": REPETITION_LIMIT}}
    files = {
        ".orchestration/active_intents.yaml": json.dumps({"active_intents": [INTENT, old]},
                                                         indent=2),
        ".orchestration/policy.yaml": json.dumps(policy, indent=2),  # JSON is YAML too
        "src/app.py": "print('app')\n",
        "README.md": "# demo workspace\n",
    }
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + ("" if text.endswith("\n") else "\n"))
    return root


class Demo:
    def __init__(self, gateway: Gateway, out: TextIO) -> None:
        self.gateway, self.out = gateway, out

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def call(self, tool: str, args: dict[str, Any]) -> CallResult:
        self.say(f"   agent -> {tool} {preview(args)}")
        result = self.gateway.call(tool, args, batch=None)
        if result.ran:
            by = f" ({result.approval})" if result.approval else ""
            first = result.output.strip().splitlines()[0] if result.output.strip() else ""
            self.say(f"   ALLOWED{by}: {first}")
        else:
            self.say(f"   REFUSED at {result.stage}: {result.reason}")
        return result

    def play(self) -> int:
        self.say("\n1. The agent writes before it has selected an intent")
        self.call("write_to_file", {"path": "src/greet.py", "content": GREET})
        self.say("\n2. It selects the intent the person listed in active_intents.yaml")
        selected = self.call("select_active_intent", {"intent_id": INTENT["id"]})
        for line in selected.output.splitlines()[1:6]:
            self.say(f"      {line}")
        self.say("\n3. A write inside the intent's owned_scope: a person must approve it")
        written = self.call("write_to_file", {"path": "src/greet.py", "content": GREET})
        if written.checkpoint_id:
            self.say(f"   checkpoint {written.checkpoint_id} was taken before the write")
        self.say("\n4. A write outside the owned_scope")
        self.call("write_to_file", {"path": "docs/notes.md", "content": "notes\n"})
        self.sneaky_command()
        self.say(f"\n6. The same call, {REPETITION_LIMIT + 1} times in a row")
        for _ in range(REPETITION_LIMIT + 1):
            self.call("read_file", {"path": "README.md"})
        return self.restore(written)

    def sneaky_command(self) -> None:
        """Step 5: what stops it is the kernel (Landlock), or without it the scope audit after."""
        self.say("\n5. A command whose program writes outside the owned_scope: the policy cannot "
                 "see inside it, so a person approves it")
        before = (self.gateway.workspace / "README.md").read_text()
        ran = self.call("execute_command", {"command": SNEAKY})
        for line in ran.output.splitlines()[1:]:  # the first is shown already
            if any(word in line for word in ("Permission denied", "undone", "UNCONFINED")):
                self.say(f"      {line.strip()}")
        unchanged = (self.gateway.workspace / "README.md").read_text() == before
        self.say(f"   README.md unchanged: {unchanged}")

    def restore(self, written: CallResult) -> int:
        self.say("\n7. The person restores the checkpoint taken before the write")
        if not (written.ran and written.checkpoint_id):
            self.say("   (skipped: the write of step 3 did not run; there is nothing to restore)")
            return 1
        done = self.gateway.restore(written.checkpoint_id)
        self.say(f"   restored {done.get('restored') or []}, removed {done.get('deleted') or []}; "
                 f"undo with checkpoint {done.get('safety_checkpoint_id')}")
        for path, why in done.get("skipped") or []:
            self.say(f"   left {path} alone: {why}")
        exists = (self.gateway.workspace / "src" / "greet.py").exists()
        self.say(f"   src/greet.py exists now: {exists}")
        return 0


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    scratch = Path(tempfile.mkdtemp(prefix="intentd-demo-"))
    try:
        return _run_in(make_demo_workspace(scratch / "workspace"), scratch / "state", args, out)
    except GatewayError as exc:
        print(f"intentd demo: {exc}", file=sys.stderr)
        return 1
    finally:
        if args.keep:
            out.write(f"\nthe workspace is kept at {scratch / 'workspace'}\n")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


def _run_in(root: Path, state: Path, args: argparse.Namespace, out: TextIO) -> int:
    """The daemon when one runs (its approvals show in the desktop app); else in-process, with
    the script answering approvals and the state kept in the scratch folder."""
    from intentd.daemon.agents.approver import auto_approve

    gateway = open_gateway(root, "intentd-demo", socket_path=args.socket,
                           approver=auto_approve(SCRIPT), in_process=args.in_process,
                           approval_timeout=args.approval_timeout, engine_home=state,
                           local_note="no daemon runs: the script answers approvals itself")
    out.write(f"intentd demo in {gateway.workspace}\npipeline: {gateway.mode} ({gateway.where})\n"
              f"intents: {INTENT['id']} \"{INTENT['name']}\" "
              f"(owned_scope {INTENT['owned_scope']}), DEMO-0 (COMPLETED)\n")
    watcher = None
    try:
        if gateway.mode == "daemon":
            watcher = _watch_approvals(args, gateway.session_id, out)
        return Demo(gateway, out).play()
    finally:
        if watcher is not None:
            watcher.close()
        gateway.close()


def _watch_approvals(args: argparse.Namespace, session_id: str, out: TextIO) -> ApprovalWatcher:
    """With --yes the script answers as "intentd demo" (the daemon learns that name from
    `initialize`); without it, it says where a person can answer."""
    if args.yes:
        return ApprovalWatcher(args.socket, session_id, approve_as(f"{SCRIPT} (--yes)", out),
                               client_name="intentd demo")
    return ApprovalWatcher(args.socket, session_id, announce(out), approver=False)
