"""Agent hook adapters: one core (sessions, deadline, fail-closed answers), one mapping per agent."""
