"""The commented files `intentd init` writes into `.orchestration/`, as text.

They are Python strings rather than package data so that every install (wheel, sdist,
editable, PyInstaller bundle) carries them with no data-file configuration. Tests load each
one with the daemon's own loaders, so a template cannot drift from the file formats.
"""

from __future__ import annotations

ACTIVE_INTENTS = """\
# The pieces of work an AI agent may do in this workspace ("intents").
#
# intentd refuses every tool call that changes something (writing a file, running a
# command that is not provably read-only, calling another MCP server's tool) until the
# agent calls `select_active_intent` with the id of an intent listed here whose status is
# selectable (IN_PROGRESS, unless policy.yaml says otherwise). Once it has selected one,
# it may write only inside that intent's `owned_scope`.
#
# Edit this file at any time: the daemon reloads it within a fraction of a second. A
# broken edit keeps the last good intents in force, and the error (file, line, what is
# wrong) shows in the desktop app and in `intentd doctor`. Closing an intent (any status
# that is not selectable) or removing it stops the agents that selected it.
# Agents can never write .orchestration/ or any .git/ folder, whatever the scope says.

active_intents:
  # One example: give it your own id, name and scope, then set `status: IN_PROGRESS`
  # so an agent may select it. Add more intents as more `- id:` entries.
  - id: EXAMPLE-1                   # what the agent cites; unique in this file
    name: Describe the piece of work in a few words
    status: PLANNED                 # only IN_PROGRESS is selectable; PLANNED, DONE... are not
    owned_scope:                    # what the agent may write: gitignore-style globs
      - src/**
      - tests/**
      - "!src/generated/**"         # a leading `!` excludes (quoted: `!` means something in YAML)
    constraints:                    # rules shown to the agent when it selects the intent
      - Keep the public API unchanged.
    acceptance_criteria:            # how the agent, and you, know the work is done
      - The test suite passes.
    # An empty `owned_scope: []` lets the agent write nothing. Keys of your own
    # (owner, ticket, ...) are kept and shown, with a warning.
"""

POLICY = """\
# How intentd decides about each tool call in this workspace.
#
# Every key below is set to its default: deleting a key, a section or this whole file
# changes nothing. While this file is invalid the safest policy is in force (nothing is
# auto-approved but reads, and a command on no list is refused) and the error (file, line,
# what is wrong) shows in the desktop app and in `intentd doctor`.
# Intents, scope and the ignore file are checked before any of this: a rule here never
# lets an agent write outside its intent's scope.

# Shell commands. A command line is split into every simple command it would run
# (pipelines, `&&` and `;` lists, subshells, $(...) and backticks, `bash -c '...'`), and
# the rules apply to each one: deny first, then ask, then allow. Patterns are globs over
# the command's words joined by one space: `*` matches anything (spaces and `/` too), `?`
# one character ("npm run *", "git push *").
commands:
  allow: []            # runs with no person asked, e.g. ["npm test", "make lint"]
  ask: []              # always waits for a person, e.g. ["git push *", "pip install *"]
  deny: []             # always refused, e.g. ["curl *", "sudo *"]
  default: ask         # a command on no list that is not provably read-only: ask or deny
  allow_redirects: false  # false: a command writing a file with `>` or `>>` waits for a person

# Which calls run with no person asked. Everything else waits for a person in the
# desktop app (or any client of the daemon), who approves or rejects it.
auto_approve:
  read: true           # read files inside the workspace
  read_external: false # read files outside the workspace
  edit: false          # write or edit files inside the workspace (and the intent's scope)
  edit_external: false # write files outside the workspace
  safe_commands: true  # commands proved read-only (ls, cat, grep, git status, ...)
  all_commands: false  # every command that is not denied: think twice
  mcp: false           # tools of other MCP servers
  max_consecutive: 20  # after this many auto-approvals in a row a person checks in; 0: never

# The same call (same tool, same arguments) made more than `limit` times in a row is
# refused, and so is a short cycle of calls going round: the agent is stuck. 0: no limit.
repetition:
  limit: 3

intents:
  # The statuses in active_intents.yaml that an agent may select.
  selectable_statuses: [IN_PROGRESS]

# Scripts run with bash in the workspace, each given the call as JSON on stdin.
# A pre_tool hook vetoes by printing {"decision": "deny", "reason": "..."}; a hook that
# exits non-zero, prints something that is not JSON or times out vetoes too.
# post_tool hooks see the result and cannot undo it. An entry is a command, or
# {command: ..., matcher: <regex over the tool name; default every tool>, timeout: <s, 10>}.
hooks:
  pre_tool: []
  #  - {command: ./scripts/check-write.sh, matcher: "write_to_file|replace_in_file", timeout: 5}
  post_tool: []
  #  - logger -t intentd
"""

IGNORE = """\
# Paths no tool may read or write, whatever the intent: gitignore syntax, one pattern per
# line, relative to the workspace. A command that names one of these paths always waits for
# a person. (`.clineignore` and `.rooignore` are honoured too.)

# Secrets
.env
.env.*
!.env.example
*.pem
*.key
*.p12
id_rsa*
id_ed25519*
.netrc
.pypirc
.npmrc

# Add your own, e.g. a folder of credentials:
# secrets/
"""

# The files `intentd init` writes, in the order it writes them, by name in `.orchestration/`.
TEMPLATES: dict[str, str] = {
    "active_intents.yaml": ACTIVE_INTENTS,
    "policy.yaml": POLICY,
    "ignore": IGNORE,
}
