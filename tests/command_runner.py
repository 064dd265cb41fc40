"""``scrapy robotstxt`` in the test's own reactor: Scrapy's option parsing, the
command's ``process_options`` and :meth:`RobotsTxtCommand.answer` (what ``run``
drives under ``CrawlerProcess``), its crawl by a ``CrawlerRunner`` of the same
settings, its output and log captured as the process's would be."""

from __future__ import annotations

import io
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

from scrapy.cmdline import ScrapyArgumentParser
from scrapy.commands import ScrapyHelpFormatter
from scrapy.crawler import CrawlerRunner
from scrapy.exceptions import UsageError
from scrapy.settings import Settings
from scrapy.utils.reactor import is_asyncio_reactor_installed

from scrapy_rfc9309.components import RobotsTxtCommand

__all__ = ["robotstxt"]


async def robotstxt(*args: str, cwd: Path, stdin: str | None = None) -> tuple[str, int]:
    """``scrapy robotstxt ARGS`` run outside a project in ``cwd``, with ``stdin``
    as its standard input: its output (stdout, stderr and the log, as the
    process prints them) and its exit status."""
    command = RobotsTxtCommand()
    settings = Settings()  # a command outside a project: Scrapy's defaults
    settings.setdict(command.default_settings, priority="command")
    command.settings = settings
    parser = ScrapyArgumentParser(
        prog="scrapy",  # the entry point's name, as the process has it
        formatter_class=ScrapyHelpFormatter,
        usage=f"scrapy robotstxt {command.syntax()}",
        conflict_handler="resolve",
        description=command.long_desc(),
    )
    command.add_options(parser)
    out = io.StringIO()
    with _as_process(out, cwd, stdin or ""):
        try:
            opts, rest = parser.parse_known_args(list(args))
            command.process_options(rest, opts)
            if not is_asyncio_reactor_installed():  # the tests' --reactor=default
                settings.set("TWISTED_REACTOR", None, priority="cmdline")
                # (Scrapy 2.19's remote control warns that it needs asyncio)
                settings.set("REMOTE_CONTROL_ENABLED", False, priority="cmdline")
            with _log_to(out, settings.get("LOG_LEVEL"), settings):
                code = await command.answer(rest, opts, CrawlerRunner(settings))
        except UsageError as error:  # as scrapy.cmdline says it
            try:
                if str(error):
                    parser.error(str(error))
                if error.print_help:
                    parser.print_help()
            except SystemExit:
                pass
            code = 2
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else 0 if done.code is None else 1
    return out.getvalue(), code


@contextmanager
def _as_process(out: io.StringIO, cwd: Path, stdin: str) -> Iterator[None]:
    """stdout and stderr into ``out``, ``stdin`` as standard input, ``cwd`` the directory."""
    before = Path.cwd()
    saved_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin)
    os.chdir(cwd)
    try:
        with redirect_stdout(out), redirect_stderr(out):
            yield
    finally:
        os.chdir(before)
        sys.stdin = saved_stdin


@contextmanager
def _log_to(out: io.StringIO, level: str, settings: Settings) -> Iterator[None]:
    """The log at ``level`` into ``out``, in Scrapy's format (its root handler's)."""
    handler = logging.StreamHandler(out)
    handler.setLevel(level)
    handler.setFormatter(logging.Formatter(settings["LOG_FORMAT"], settings["LOG_DATEFORMAT"]))
    root = logging.getLogger()
    saved_level = root.level
    root.addHandler(handler)
    if saved_level > handler.level:
        root.setLevel(handler.level)
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(saved_level)
