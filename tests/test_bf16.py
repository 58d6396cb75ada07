"""recode_lib.core.bf16: what `bf16: auto` and `precision: auto` become on a machine, read from
/proc/cpuinfo's flags."""

import pytest

from recode_lib.core import bf16
from recode_lib.core.bf16 import (
    cpu_flags,
    cpu_has_native_bf16,
    cpu_summary,
    resolve_bf16,
    resolve_precision,
)
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.training.grpo import load_recipe, recipe_dict
from recode_lib.training.sft_start import SFTStartConfig

ZEN4 = (
    "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 "
    "avx512_vnni\n\nprocessor\t: 1\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16\n"
)
SKYLAKE = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512bw avx512_vnni\n"
SAPPHIRE = "processor\t: 0\nflags\t\t: fpu avx512f amx_tile amx_bf16 amx_int8\n"
GRAVITON3 = "processor\t: 0\nBogoMIPS\t: 2100.00\nFeatures\t: fp asimd sve bf16 i8mm\n"
GRAVITON2 = "processor\t: 0\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32\n"


@pytest.mark.parametrize(
    "text, native",
    [
        (ZEN4, True),
        (SKYLAKE, False),
        (SAPPHIRE, True),
        (GRAVITON3, True),
        (GRAVITON2, False),
        ("", False),
    ],
)
def test_native_bf16_from_cpuinfo(tmp_path, text, native):
    p = tmp_path / "cpuinfo"
    p.write_text(text)
    assert cpu_has_native_bf16(cpu_flags(p)) is native


def test_avx512_without_bf16_is_not_native(tmp_path):
    # avx512bw and avx512_vnni are not bfloat16 arithmetic: oneDNN would emulate it
    p = tmp_path / "cpuinfo"
    p.write_text(SKYLAKE)
    assert "avx512f" in cpu_flags(p)
    assert resolve_bf16("auto", use_cpu=True, flags=cpu_flags(p)) is False


def test_unreadable_cpuinfo_means_no_bf16(tmp_path):
    assert cpu_flags(tmp_path / "missing") == frozenset()
    assert resolve_bf16("auto", use_cpu=True, flags=cpu_flags(tmp_path / "missing")) is False


def test_bools_pass_through_and_none_is_false():
    assert resolve_bf16(True, use_cpu=True, flags=frozenset()) is True
    assert resolve_bf16(False, use_cpu=True, flags=frozenset({"avx512_bf16"})) is False
    assert resolve_bf16(None, use_cpu=True) is False
    assert resolve_bf16("AUTO", use_cpu=True, flags=frozenset({"amx_bf16"})) is True


@pytest.mark.parametrize("bad", ["yes", "bf16", 1, 0.5])
def test_other_values_are_refused_by_name(bad):
    with pytest.raises(ValueError, match="true, false or auto"):
        resolve_bf16(bad, use_cpu=True)


def test_recipe_auto_becomes_this_machines_bool():
    r = load_recipe("cg_grpo_smoke", bf16="auto", use_cpu=True)
    assert r.bf16 is cpu_has_native_bf16()
    assert recipe_dict(r)["bf16"] is cpu_has_native_bf16()  # what the run's fingerprint carries


def test_recipe_refuses_a_bad_bf16_naming_the_recipe():
    with pytest.raises(ValueError, match=r"cg_grpo_smoke.*true, false or auto"):
        load_recipe("cg_grpo_smoke", bf16="maybe")


def test_sft_config_resolves_auto():
    assert SFTStartConfig(bf16="auto").bf16 is cpu_has_native_bf16()
    assert SFTStartConfig().bf16 is False
    with pytest.raises(ValueError, match="SFTStartConfig"):
        SFTStartConfig(bf16="sometimes")


ZEN3 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse2 avx avx2 fma vaes\n"


@pytest.mark.parametrize(
    "text, gen, copy",
    [
        (ZEN4, "bfloat16", "bfloat16"),
        (ZEN3, "native", "float32"),
        (SKYLAKE, "native", "float32"),
        (GRAVITON3, "bfloat16", "bfloat16"),
    ],
)
def test_auto_precision_is_bfloat16_only_where_it_is_native(tmp_path, text, gen, copy):
    # bfloat16 weights decode ~2x slower than float32 on a CPU without bf16 instructions
    p = tmp_path / "cpuinfo"
    p.write_text(text)
    assert resolve_precision("auto", use_cpu=True, flags=cpu_flags(p)) == gen
    assert resolve_precision("auto", copy=True, use_cpu=True, flags=cpu_flags(p)) == copy


@pytest.mark.parametrize("value", ["native", "bfloat16", "int8", "float32", "bogus"])
def test_other_precisions_pass_through_for_the_caller_to_check(value):
    assert resolve_precision(value, use_cpu=True, flags=frozenset({"avx512_bf16"})) == value


@pytest.mark.parametrize(
    "flags, native", [(frozenset({"avx512_bf16"}), "bfloat16"), (frozenset({"avx2"}), "native")]
)
def test_eval_spec_records_what_auto_became(monkeypatch, flags, native):
    monkeypatch.setattr(bf16, "cpu_flags", lambda *a, **k: flags)
    monkeypatch.setattr(bf16, "cuda_bf16", lambda: None)  # a CPU machine
    assert EvalSpec(precision="auto").precision == native
    assert EvalSpec(precision="auto").fingerprint() == EvalSpec(precision=native).fingerprint()
    assert EvalSpec(backend="vllm_standin", precision="auto").precision == "native"


@pytest.mark.parametrize(
    "flags, copy",
    [(frozenset({"avx2", "avx512_bf16"}), "bfloat16"), (frozenset({"avx2"}), "float32")],
)
def test_recipe_generation_precision_auto_by_machine_lora_and_vllm(monkeypatch, flags, copy):
    monkeypatch.setattr(bf16, "cpu_flags", lambda *a, **k: flags)  # this machine's /proc/cpuinfo
    lora = load_recipe("cg_grpo_laptop", generation_precision="auto", use_cpu=True)
    assert lora.generation_precision == copy
    assert recipe_dict(lora)["generation_precision"] == lora.generation_precision
    full = load_recipe("cg_grpo_smoke", generation_precision="auto", use_cpu=True, lora=None)
    assert full.generation_precision == "native"  # no adapter: nothing a copy would save
    vllm = load_recipe("cg_grpo_laptop", generation_precision="auto", use_vllm=True)
    assert vllm.generation_precision == "native"  # vLLM samples


def test_cpu_summary_names_the_model_and_the_speed_flags(tmp_path):
    p = tmp_path / "cpuinfo"
    p.write_text("processor\t: 0\nmodel name\t: AMD EPYC 9B14\n" + ZEN4.split("\n", 2)[2])
    s = cpu_summary(p)
    assert s["model"] == "AMD EPYC 9B14" and s["native_bf16"] is True
    assert s["isa"] == ["avx2", "avx512f", "avx512_bf16", "avx512_vnni"] and s["cpus"] >= 1
    assert cpu_summary(tmp_path / "missing")["isa"] == []
