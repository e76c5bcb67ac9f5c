"""Doctor checks of the agents wired to intentd: which agents' hook configs (this workspace's
and the user's) run intentd, and whether each config is valid and complete."""

from __future__ import annotations

from pathlib import Path

from intentd.daemon.setup.doctor.result import CheckResult, fail, ok, skip, warn


def check_agents(workspace: Path, home: Path | None = None) -> list[CheckResult]:
    try:
        from intentd.daemon.agents.hooks.install import Scope
        from intentd.daemon.agents.hooks.registry import AGENTS, UnknownAgent, adapter
    except ImportError as exc:
        return [fail("agent hooks", f"intentd's hook adapters do not import: {exc}",
                     "reinstall intentd")]
    home = home or Path.home()
    root = workspace.resolve() if workspace.is_dir() else None
    scopes = [Scope(root, home)] if root is not None else []
    scopes.append(Scope(None, home))
    results: list[CheckResult] = []
    for agent in AGENTS:
        try:  # one broken adapter must not hide the others
            installer = adapter(agent).installer()
            wirings = [(scope, installer.inspect(scope)) for scope in scopes] if installer else []
        except UnknownAgent:
            continue
        except Exception as exc:  # noqa: BLE001 - reported, as any check's failure is
            results.append(fail(agent, f"its hook adapter is broken: {type(exc).__name__}: "
                                       f"{exc}", "reinstall intentd"))
            continue
        for scope, found in wirings:
            where = "user" if scope.user else "workspace"
            name = f"{agent} ({where})"
            flag = "--user" if scope.user else f"--workspace {scope.root}"
            for wiring in found:
                problems = "; ".join(wiring.problems)
                if wiring.wired and not wiring.problems:
                    results.append(ok(name, f"wired: {wiring.path}"))
                elif wiring.wired:
                    results.append(fail(name, f"{wiring.path}: {problems}",
                                        f"`intentd hook install {agent} {flag}` "
                                        "rewrites intentd's entries"))
                elif wiring.problems:
                    results.append(warn(name, f"{wiring.path} (not wired): {problems}",
                                        f"fix the file, then `intentd hook install "
                                        f"{agent} {flag}`"))
    if not any(r.status in ("ok", "fail") for r in results):
        results.append(skip("agent hooks", "no agent's hooks run intentd here or for this user "
                                           "(`intentd hook install AGENT` wires one)"))
    return results
