from dataclasses import dataclass

from recode_lib.core.stamps import package_versions, provenance


@dataclass
class Cfg:
    lr: float = 1e-5


def test_stamp_has_seed_config_git_and_versions():
    stamp = provenance(seed=3, config=Cfg())
    assert stamp["seed"] == 3 and stamp["config"] == {"lr": 1e-5}
    assert stamp["versions"]["torch"].startswith("2.13")
    assert "git" in stamp and stamp["python"]


def test_missing_packages_are_none_not_errors():
    assert package_versions(("surely-not-installed-pkg",)) == {"surely-not-installed-pkg": None}


def test_fingerprint_is_stable_and_sensitive():
    from dataclasses import dataclass

    from recode_lib.core.stamps import fingerprint

    @dataclass
    class C:
        a: int = 1

    assert fingerprint(C(), {"y": 2, "x": 1}) == fingerprint({"a": 1}, {"x": 1, "y": 2})
    assert fingerprint(C(a=2)) != fingerprint(C()) and len(fingerprint(C())) == 16
