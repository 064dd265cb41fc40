"""The Redis store's Lua scripts run by their digest, pipelined without asking first. Pure.

A script is sent as ``EVALSHA`` (its SHA-1 is known without asking Redis);
a Redis that does not know it yet (a new server, a restart, ``SCRIPT FLUSH``)
answers ``NOSCRIPT``: every script of the store is loaded then (one round
trip) and the commands refused run again. redis-py's own pipelined scripts
send ``SCRIPT EXISTS`` before each pipeline (one round trip more each time);
:meth:`Scripts.execute` does not: a pipeline is one round trip, two more only
the first time a server meets the scripts.

A command answered ``NOSCRIPT`` did not run, so running it again runs it
once. On a Redis Cluster scripts are not pipelined (the store calls them one
at a time, each on its site's slot); a direct call of a registered
:class:`redis.commands.core.Script` already runs ``EVALSHA`` first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.exceptions import NoScriptError

__all__ = ["Scripts"]


class Scripts:
    """The scripts of one store's client (see the module docstring)."""

    def __init__(self, client: Any) -> None:
        self._redis = client
        self._all: list[Any] = []

    def register(self, source: str) -> Any:
        """``source`` as a :class:`~redis.commands.core.Script` (called directly:
        ``EVALSHA``, loaded on ``NOSCRIPT``), loaded with the others on ``NOSCRIPT``
        in a pipeline."""
        script = self._redis.register_script(source)
        self._all.append(script)
        return script

    def pipeline(self) -> Any:
        """A pipeline (no transaction) to :meth:`queue` on and :meth:`execute`."""
        return self._redis.pipeline(transaction=False)

    @staticmethod
    def queue(pipe: Any, script: Any, keys: Sequence[Any], args: Sequence[Any]) -> None:
        """``script`` queued on ``pipe`` as ``EVALSHA``, without redis-py's
        ``SCRIPT EXISTS`` check."""
        pipe.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)

    def execute(self, pipe: Any) -> list[Any]:
        """The answers of ``pipe``, one round trip; the commands answered
        ``NOSCRIPT`` run again once every script is loaded. The first error
        answered is raised, as redis-py does."""
        commands = list(pipe.command_stack)
        answers = list(pipe.execute(raise_on_error=False))
        missing = [n for n, answer in enumerate(answers) if isinstance(answer, NoScriptError)]
        if missing:
            loading = self._redis.pipeline(transaction=False)
            for script in self._all:  # the digest is the text's: the commands queued stand
                loading.script_load(script.script)
            loading.execute()
            for number in missing:
                args, options = commands[number]
                pipe.execute_command(*args, **options)
            for number, answer in zip(missing, pipe.execute(raise_on_error=False), strict=True):
                answers[number] = answer
        pipe.raise_first_error(commands, answers)
        return answers
