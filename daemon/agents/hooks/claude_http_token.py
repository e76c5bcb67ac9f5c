"""`intentd hook token`: the HTTP hook's token, for `export INTENTD_HOOK_TOKEN="$(intentd hook token)"`.

Anything of the user's may read the token file anyway (it is theirs, mode 0600); this command
only saves looking for it. The token lets a caller reach the HTTP hook's agent-side methods and
nothing else, so an agent that reads it gains nothing it did not have.
"""

from __future__ import annotations

import argparse
import sys

from intentd.daemon.server.hook_token import TokenError, read_token, token_path


def run_token(args: argparse.Namespace) -> int:
    try:
        token = read_token()
    except TokenError as exc:
        hint = (" (the daemon makes it when it starts: run `intentd serve`)"
                if not token_path().exists() else "")
        print(f"intentd hook token: {exc}{hint}", file=sys.stderr)
        return 1
    print(token)
    return 0
