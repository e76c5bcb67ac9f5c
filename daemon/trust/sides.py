"""Which side a calling process is on: the person's, or an agent's, decided from its ancestry."""

# Never from what a caller says about itself. A caller is on an agent's side when it, or any
# process above it, is: the daemon (it runs commands and hooks, and is their subreaper), a
# process an agent session was opened from (recorded with its start time), a known agent
# program, a process with an agent's marks in its environment, or one of intentd's own agent
# runners (`intentd run` / `mcp` / `demo` / `hook`).

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from enum import StrEnum

from intentd.daemon.trust.procs import Proc, ancestry, read_proc, uptime_ticks

AGENT_PROGRAMS = frozenset({
    "claude", "codex", "gemini", "aider", "cursor-agent", "opencode", "goose", "amp", "qwen",
    "crush", "cline", "copilot", "kiro-cli", "droid",
})
AGENT_PACKAGES = ("@anthropic-ai/claude-code", "@openai/codex", "@google/gemini-cli")
# Variables agents set in the environment of the commands they run. A backstop for a command
# that left the agent's process tree (double-forked to init) but kept its environment.
AGENT_ENVIRONMENT = frozenset({"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "GEMINI_CLI",
                               "CODEX_SANDBOX", "CODEX_SANDBOX_NETWORK_DISABLED"})
INTERPRETERS = frozenset({"node", "nodejs", "bun", "deno", "python", "python3"})
RUNNER_COMMANDS = frozenset({"run", "mcp", "demo", "hook"})
INTENTD_MODULES = frozenset({"intentd", "intentd.daemon", "intentd.daemon.cli"})
# Never marked as an agent on a client's word: marking the person's shell or terminal would
# lock the person out of everything started from it.
# A hook's agent runs it through a shell (`sh -c`): shells may stand between the two.
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "fish", "ksh", "mksh", "tcsh", "csh"})
# The person's session: what started the terminal may have started the app too.
SESSION = frozenset({
    "login", "sshd", "su", "sudo", "tmux", "screen", "init", "systemd", "intentd-gui",
    "gnome-terminal-", "konsole", "xterm", "alacritty", "kitty", "wezterm-gui", "foot", "tilix",
    "ghostty", "xfce4-terminal", "terminator", "sshd-session", "code", "electron",
    "sway", "i3", "hyprland", "niri", "river", "labwc", "wayfire", "weston", "cage", "openbox",
    "fluxbox", "awesome", "bspwm", "dwm", "xmonad", "gnome-shell", "gnome-session-b",
    "kwin_wayland", "kwin_x11", "plasmashell", "ksmserver", "xfce4-session", "xfwm4", "xinit",
    "xorg", "xwayland", "gdm", "sddm", "lightdm",
})
UNMARKABLE = SHELLS | SESSION


class Side(StrEnum):
    PERSON = "person"
    AGENT = "agent"
    UNKNOWN = "unknown"  # no ancestry (no /proc, the process is gone): untrusted


@dataclass(frozen=True)
class Verdict:
    side: Side
    why: str


def _base(path: str) -> str:
    return os.path.basename(path).lower()


def _plain_name(proc: Proc) -> str:
    """The program's name without a title: "tmux: server" is tmux."""
    name: str = proc.comm.split(":")[0].strip().lower()
    return name


def is_agent_program(proc: Proc) -> bool:
    names = {proc.comm.lower(), _base(proc.argv[0]) if proc.argv else ""}
    if proc.argv and _base(proc.argv[0]).rstrip("0123456789.") in INTERPRETERS and len(proc.argv) > 1:
        names.add(_base(proc.argv[1]))
    if names & AGENT_PROGRAMS:
        return True
    return any(package in arg for arg in proc.argv[:3] for package in AGENT_PACKAGES)


def is_intentd_runner(proc: Proc) -> bool:
    """`intentd run|mcp|demo|hook …`, as a script or as `python -m intentd …`."""
    argv = proc.argv
    if argv and _base(argv[0]) == "intentd":
        return len(argv) > 1 and argv[1] in RUNNER_COMMANDS
    for index, arg in enumerate(argv[:-2]):
        if arg == "-m" and argv[index + 1] in INTENTD_MODULES:
            return argv[index + 2] in RUNNER_COMMANDS
    return False


class AgentProcesses:
    """Processes that agent sessions were opened from, known by (pid, start time)."""

    def __init__(self) -> None:
        self._known: dict[tuple[int, int], str] = {}
        self._lock = threading.Lock()

    def add(self, proc: Proc, label: str) -> None:
        with self._lock:
            for key in [k for k in self._known if _gone(k)]:
                del self._known[key]
            self._known[proc.key] = label

    def get(self, proc: Proc) -> str | None:
        with self._lock:
            return self._known.get(proc.key)


def _gone(key: tuple[int, int]) -> bool:
    found = read_proc(key[0])
    return found is None or found.start != key[1]


def markable(proc: Proc, chain: list[Proc], daemon_key: tuple[int, int]) -> str | None:
    """Why `proc` may not be recorded as an agent process named by a client in `chain`;
    None when it may: the client's own ancestor, not a shell, a terminal, the desktop or the
    daemon, and below every such part of the person's session in the chain (a window manager
    that started both the agent's terminal and the app must not be marked: the app would
    then be the agent's)."""
    keys = [p.key for p in chain]
    if proc.key not in keys[1:]:
        return "it is not an ancestor of the calling process"
    if _plain_name(proc) in UNMARKABLE or proc.pid == 1 or proc.key == daemon_key:
        return f"{proc.describe()} is a shell, a terminal, the desktop or the daemon"
    above = next((p for p in chain[1:keys.index(proc.key, 1)] if _plain_name(p) in SESSION),
                 None)
    if above is not None:
        return (f"{proc.describe()} is above {above.describe()}, part of the person's session, "
                "which may have started the app too")
    return None


def classify(chain: list[Proc] | None, daemon_key: tuple[int, int],
             agents: AgentProcesses) -> Verdict:
    if not chain:
        return Verdict(Side.UNKNOWN, "the calling process and its ancestry cannot be read")
    for index, proc in enumerate(chain):
        if proc.key == daemon_key:
            return Verdict(Side.AGENT, f"{chain[0].describe()} was started by the daemon "
                                       "(a command or hook it ran)")
        label = agents.get(proc)
        if label is not None:
            return Verdict(Side.AGENT, f"{chain[0].describe()} descends from {proc.describe()}, "
                                       f"which opened agent session {label}")
        if is_agent_program(proc):
            return Verdict(Side.AGENT, f"{chain[0].describe()} descends from the agent "
                                       f"{proc.describe()}")
        marks = proc.env_names & AGENT_ENVIRONMENT
        if marks:
            return Verdict(Side.AGENT, f"{proc.describe()} runs in an agent's environment "
                                       f"({', '.join(sorted(marks))})")
        if index > 0 and is_intentd_runner(proc):
            return Verdict(Side.AGENT, f"{chain[0].describe()} was started by the agent runner "
                                       f"{proc.describe()}")
    return Verdict(Side.PERSON, f"{chain[0].describe()} descends from no agent")


def caller_chain(pid: int) -> list[Proc] | None:
    """The ancestry of a peer that has just connected; None when it cannot be vouched for."""
    if pid <= 0:
        return None
    now = uptime_ticks()
    chain: list[Proc] | None = ancestry(pid, env_wanted=AGENT_ENVIRONMENT)
    if chain and now is not None and chain[0].start > now:
        return None  # started after it connected: the peer is gone and its pid reused
    return chain


SHELLS = frozenset({"sh", "bash", "dash", "zsh", "fish", "ksh", "mksh"})


def hook_agent(command: str = "hook") -> dict[str, int] | None:
    """For a hook adapter: the agent process that ran it, as `{"pid", "start"}` for the daemon.

    The nearest known agent program above us; else our parent, or its parent when the parent
    is a `sh -c` (agents run hook commands through one). None when this process is not itself
    that `intentd` command (called in-process it has no agent of its own), or when a person
    ran it by hand from an interactive shell."""
    chain = ancestry(os.getpid())
    if not chain or not is_intentd_runner(chain[0]) or command not in chain[0].argv:
        return None
    above = chain[1:]
    agent = next((p for p in above[:6] if is_agent_program(p)), None)
    if agent is None and above:
        parent = above[0]
        if parent.comm in SHELLS:
            agent = above[1] if "-c" in parent.argv[1:3] and len(above) > 1 else None
        else:
            agent = parent
    if agent is None or _plain_name(agent) in UNMARKABLE or agent.pid == 1:
        return None
    return {"pid": agent.pid, "start": agent.start}
