"""The start of a run: one run per folder, targets waited for, what --fresh clears."""

import pytest

from voice.app.run.run_start import RUN_SUMMARY_FILES, clear_run_summary, folder_lock
from voice.errors import ConfigError
from voice.lines.targets import parse_target


def test_a_folder_is_locked_while_a_run_writes_it(tmp_path):
    with folder_lock(tmp_path), pytest.raises(ConfigError, match="in use"), folder_lock(tmp_path):
        pass
    with folder_lock(tmp_path):  # released again
        pass


def test_fresh_clears_the_run_summary_and_report_and_nothing_else(tmp_path):
    for name in (*RUN_SUMMARY_FILES, "run.json"):
        (tmp_path / name).write_text("{}")
    clear_run_summary(tmp_path)
    clear_run_summary(tmp_path)  # nothing left to clear is no error
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


# --- CI: waiting for a bot that starts with the bench ------------------------------------------------------


async def test_waiting_for_a_target_returns_once_it_listens_and_fails_clearly_if_it_never_does():
    import asyncio
    import re

    from voice.app.run.launch import free_port
    from voice.app.run.run_start import wait_for_targets
    from voice.errors import LineError

    port = free_port()
    target = parse_target(f"pcm+ws://127.0.0.1:{port}/pcm")
    assert target.address() == ("127.0.0.1", port)
    assert parse_target("wss://bot.example.com/pcm").address() == ("bot.example.com", 443)

    async def accept(reader, writer):
        writer.close()

    async def listen_later():
        await asyncio.sleep(0.5)
        return await asyncio.start_server(accept, "127.0.0.1", port)

    later = asyncio.ensure_future(listen_later())
    await wait_for_targets([target], timeout_s=10, poll_s=0.05)  # returns once the bot listens
    server = await later
    server.close()
    await server.wait_closed()
    message = re.escape(
        f"{target} did not accept a connection within 0.3 s (last try: ConnectionRefusedError"
    )
    with pytest.raises(LineError, match=message):
        await wait_for_targets([target], timeout_s=0.3, poll_s=0.05)


async def test_waiting_for_a_sip_target_asks_it_by_options():
    from voice.app.benchmarks.sip_phone import ScriptedPhone
    from voice.app.run.run_start import wait_for_targets
    from voice.errors import LineError

    async with ScriptedPhone("talks") as phone:
        await wait_for_targets([parse_target(phone.uri)], timeout_s=5)  # UDP: nothing to connect to
    with pytest.raises(LineError, match=r"did not answer SIP OPTIONS within 0\.5 s"):
        await wait_for_targets([parse_target("sip:bot@127.0.0.1:9")], timeout_s=0.5)
