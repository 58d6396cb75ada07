from dataclasses import dataclass

from recode_lib.provenance import package_versions, provenance


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
