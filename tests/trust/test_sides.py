"""Which side a process chain is on: the daemon, recorded agents, agent programs, our runners."""

from __future__ import annotations

import os
import subprocess
import sys

from intentd.daemon.trust.procs import Proc, ancestry, read_proc
from intentd.daemon.trust.sides import (
    AgentProcesses,
    Side,
    caller_chain,
    classify,
    is_agent_program,
    is_intentd_runner,
    markable,
)

DAEMON = (50, 500)


def proc(pid: int, ppid: int, comm: str, *argv: str, start: int | None = None) -> Proc:
    return Proc(pid, ppid, pid * 10 if start is None else start, comm, argv or (comm,))


TERMINAL = [proc(40, 30, "bash", "-bash"), proc(30, 1, "kitty"), proc(1, 0, "systemd")]


def chain(*procs: Proc) -> list[Proc]:
    return [*procs, *TERMINAL]


def test_the_person_s_terminal_is_the_person_s() -> None:
    cli = proc(60, 40, "intentd", "/usr/bin/intentd", "approve", "a-1")
    assert classify(chain(cli), DAEMON, AgentProcesses()).side is Side.PERSON


def test_anything_under_the_daemon_is_the_agent_s() -> None:
    daemon = Proc(50, 40, 500, "python3", ("python3", "-m", "intentd", "serve"))
    command = proc(70, 50, "bash", "bash", "-c", "git diff")
    helper = proc(71, 70, "diff-helper", "/ws/evil")
    assert classify(chain(helper, command, daemon), DAEMON, AgentProcesses()).side is Side.AGENT


def test_a_reused_daemon_pid_is_not_the_daemon() -> None:
    impostor = Proc(50, 40, 999, "python3", ("python3",))
    assert classify(chain(impostor), DAEMON, AgentProcesses()).side is Side.PERSON


def test_known_agent_programs_and_their_children() -> None:
    claude = proc(80, 40, "claude", "claude")
    node_codex = proc(81, 40, "node", "node", "/usr/lib/node_modules/@openai/codex/bin/codex.js")
    for agent in (claude, node_codex):
        assert is_agent_program(agent)
        child = proc(90, agent.pid, "python3", "python3", "x.py")
        assert classify(chain(child, agent), DAEMON, AgentProcesses()).side is Side.AGENT
    assert not is_agent_program(proc(82, 40, "python3", "python3", "-m", "pytest"))


def test_our_runners_make_their_children_the_agent_s_but_not_themselves() -> None:
    """`intentd demo` answers its own approvals with --yes (the person asked for that); what
    it or `intentd run` runs in-process is the agent's."""
    demo = proc(85, 40, "python3", "python3", "-m", "intentd", "demo", "--yes")
    run = proc(86, 40, "intentd", "/home/me/.local/bin/intentd", "run", "fix it")
    for runner in (demo, run):
        assert is_intentd_runner(runner)
        assert classify(chain(runner), DAEMON, AgentProcesses()).side is Side.PERSON
        child = proc(95, runner.pid, "bash", "bash", "-c", "make")
        assert classify(chain(child, runner), DAEMON, AgentProcesses()).side is Side.AGENT
    assert not is_intentd_runner(proc(87, 40, "python3", "python3", "-m", "intentd", "approve"))


def test_a_recorded_agent_counts_only_with_its_start_time() -> None:
    agents = AgentProcesses()
    agent = proc(os.getpid(), 40, "agent", start=read_proc(os.getpid()).start)  # type: ignore[union-attr]
    agents.add(agent, "s-1")
    child = proc(99, agent.pid, "python3")
    assert classify(chain(child, agent), DAEMON, agents).side is Side.AGENT
    reused = Proc(agent.pid, 40, agent.start + 1, "agent", ("agent",))
    assert classify(chain(child, reused), DAEMON, agents).side is Side.PERSON


def test_no_ancestry_is_unknown_and_untrusted() -> None:
    assert classify(None, DAEMON, AgentProcesses()).side is Side.UNKNOWN
    assert caller_chain(0) is None


def test_a_client_may_name_only_its_own_ancestor_and_never_a_shell() -> None:
    hook = proc(100, 80, "python3", "python3", "-m", "intentd", "hook", "claude-code")
    agent = proc(80, 40, "fake-agent")
    mine = chain(hook, agent)
    assert markable(agent, mine, DAEMON) is None
    assert "shell" in str(markable(TERMINAL[0], mine, DAEMON))
    stranger = proc(200, 1, "gnome-shell")
    assert "not an ancestor" in str(markable(stranger, mine, DAEMON))


def test_nothing_above_the_person_s_terminal_is_marked() -> None:
    """A window manager started the agent's terminal and the app alike: marked, it would put
    the app on the agent's side and lock the person out. Known by name or not, what lies
    above a terminal is the person's session."""
    hook = proc(100, 80, "python3", "python3", "-m", "intentd", "hook", "claude-code")
    agent = proc(80, 45, "claude")
    sh = proc(45, 40, "sh")
    for desktop in ("sway", "my-own-wm"):
        session = [proc(40, 30, "bash"), proc(30, 20, "foot"), proc(20, 1, desktop),
                   proc(1, 0, "systemd")]
        mine = [hook, sh, agent, *session]
        assert markable(agent, [hook, agent, *session], DAEMON) is None
        assert markable(agent, mine, DAEMON) is None, "a hook's own `sh -c` is no boundary"
        why = str(markable(session[2], mine, DAEMON))
        assert "the desktop" in why or "part of the person's session" in why, why


def test_real_ancestry_reaches_the_first_process() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    try:
        found = ancestry(child.pid)
        assert found is not None and found[0].pid == child.pid
        assert found[1].pid == os.getpid() and found[-1].ppid == 0
        assert all(a.start <= b.start for a, b in zip(found[1:], found[:-1], strict=True))
    finally:
        child.kill()
        child.wait()
    assert read_proc(child.pid) is None


def test_an_agents_environment_marks_a_process_that_left_its_tree() -> None:
    """Claude Code sets CLAUDECODE=1 for its shell commands; a double-forked child re-parented
    to init keeps it (unless it scrubs its environment: see the README's limits)."""
    orphan = Proc(120, 1, 1200, "python3", ("python3", "x.py"), frozenset({"PATH", "CLAUDECODE"}))
    verdict = classify([orphan, TERMINAL[-1]], DAEMON, AgentProcesses())
    assert verdict.side is Side.AGENT and "CLAUDECODE" in verdict.why
    me = read_proc(os.getpid(), env_wanted=frozenset({"PATH", "NO_SUCH_VARIABLE_HERE"}))
    assert me is not None and me.env_names == {"PATH"}
