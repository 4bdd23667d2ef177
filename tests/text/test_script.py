"""Traditional to simplified script (voice.text.script): shared by the CER, the transcribers, the judges."""

from concurrent.futures import ThreadPoolExecutor

from voice.text.script import to_simplified


def test_to_simplified_converts_traditional_and_keeps_simplified():
    assert to_simplified("他說話，這個電腦") == "他说话，这个电脑"
    assert to_simplified("我想查询天气") == "我想查询天气"


def test_conversions_from_many_threads_at_once_all_come_out_whole():
    # the converter loads its tables lazily on first use, which is not thread-safe on its own
    texts = ["他說話", "這個電腦", "門衛室", "我想查询天气"] * 25
    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(to_simplified, texts))
    assert got == [{"他說話": "他说话", "這個電腦": "这个电脑", "門衛室": "门卫室"}.get(t, t) for t in texts]
