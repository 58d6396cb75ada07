import pytest

from recode_lib.core.models import ModelError, load_model, load_tokenizer, resolve_model


def test_tiny_tokenizer_roundtrips_and_pads_left(tiny_model_dir):
    tok = load_tokenizer(tiny_model_dir)
    text = "def add(a, b):\n    return a + b  # 42"
    ids = tok(text)["input_ids"]
    assert tok.decode(ids) == text
    assert tok.padding_side == "left"
    assert tok.pad_token_id != tok.eos_token_id


def test_tiny_chat_template_and_generation(tiny_model_dir):
    model, tok = load_model(tiny_model_dir)
    msgs = [[{"role": "user", "content": "hi"}], [{"role": "user", "content": "a longer question"}]]
    batch = tok.apply_chat_template(
        msgs, add_generation_prompt=True, return_tensors="pt", padding=True, return_dict=True
    )
    assert batch["input_ids"][0, 0].item() == tok.pad_token_id  # left padding
    out = model.generate(**batch, max_new_tokens=5, do_sample=False)
    assert out.shape[0] == 2 and out.shape[1] <= batch["input_ids"].shape[1] + 5


def test_missing_folder_is_named(tmp_path):
    with pytest.raises(ModelError, match="does not exist"):
        resolve_model(str(tmp_path / "nope"))


def test_folder_without_config_is_named(tmp_path):
    with pytest.raises(ModelError, match="no config.json"):
        resolve_model(str(tmp_path))


def test_unreadable_weights_are_named(tiny_model_dir, tmp_path):
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(tiny_model_dir, bad)
    (bad / "model.safetensors").write_bytes(b"garbage")
    with pytest.raises(ModelError, match=str(bad)):
        load_model(bad)


def test_hub_ids_pass_through():
    assert resolve_model("Qwen/Qwen2.5-Coder-7B-Instruct") == "Qwen/Qwen2.5-Coder-7B-Instruct"
