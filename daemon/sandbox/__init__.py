"""The sandbox: commands confined to the intent's scope by Landlock, and the scope audit after them.

`confine` builds one command's confinement (writes only beneath the folders the intent's
owned_scope covers, its private TMPDIR, /dev/null and the tty; `.git/` and `.orchestration/`
never; TCP per the policy). `audit` compares what a command changed with the scope and undoes
what is outside it. `sandbox_status` says whether this machine can confine at all.
"""
