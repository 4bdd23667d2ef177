"""``callsim report``: both report files rebuilt from a run's folder."""

from voice.app.cli import main


async def test_the_report_command_rebuilds_from_a_target_folder_and_links_audio(run_dir, capsys):
    folder = run_dir / "pcm-ws-b.test-pcm"
    assert main(["report", str(folder), "--audio", "link"]) == 0
    html = (folder / "report.html").read_text()
    assert 'href="m-1.wav"' in html and "data:audio" not in html
    assert main(["report", str(run_dir / "missing")]) == 2
