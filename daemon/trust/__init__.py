"""Who is on the other end: the person's side or an agent's, and whether a daemon is the real one."""
