"""The LLM answer cache: keys from the request, one readable file per answer, never the API key."""

import json

from voice.llm.cache import AnswerCache, default_dir, model_folder, request_key


def test_the_key_is_canonical_and_changes_with_any_part_of_the_request():
    a = request_key({"model": "m", "messages": [{"role": "user", "content": "你好"}], "prompt_version": "1"})
    same = request_key(
        {"prompt_version": "1", "messages": [{"content": "你好", "role": "user"}], "model": "m"}
    )
    assert a == same and len(a) == 64
    assert a != request_key(
        {"model": "m", "messages": [{"role": "user", "content": "你好"}], "prompt_version": "2"}
    )
    assert a != request_key(
        {"model": "n", "messages": [{"role": "user", "content": "你好"}], "prompt_version": "1"}
    )


def test_entries_round_trip_under_the_model_folder(tmp_path):
    cache = AnswerCache(tmp_path)
    key = request_key({"x": 1})
    assert cache.get("Qwen/Qwen2.5-7B", key) is None
    path = cache.put("Qwen/Qwen2.5-7B", key, {"request": {"x": 1}, "answer": "{}", "mode": "schema"})
    assert path == tmp_path / "Qwen_Qwen2.5-7B" / key[:2] / f"{key}.json"
    entry = cache.get("Qwen/Qwen2.5-7B", key)
    assert entry is not None and entry["answer"] == "{}" and entry["request"] == {"x": 1}
    assert not list(path.parent.glob(".*.tmp"))  # written atomically, nothing left behind


def test_an_unreadable_or_foreign_entry_counts_as_absent(tmp_path):
    cache = AnswerCache(tmp_path)
    key = request_key({"x": 2})
    path = cache.path("m", key)
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    assert cache.get("m", key) is None
    path.write_text(json.dumps({"key": "other", "answer": "{}"}), encoding="utf-8")
    assert cache.get("m", key) is None


def test_the_default_folder_is_under_the_callsim_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("CALLSIM_CACHE", str(tmp_path))
    assert default_dir() == tmp_path / "llm"
    assert model_folder("qwen2.5:7b") == "qwen2.5_7b" and model_folder("..") == "_"


def test_the_typed_key_material_is_what_a_request_gives() -> None:
    from voice.llm.cache import KeyMaterial
    from voice.llm.client import ChatRequest, Message

    material = ChatRequest((Message("user", "hi"),), schema={"type": "object"}).key_material("m")
    assert list(material) == list(KeyMaterial.__annotations__)
