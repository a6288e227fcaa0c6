"""`job submit`'s spec builder: a preset takes the command's learning rate when one is given
(before, `--lr` was silently ignored with `--preset`, so two preset jobs that differ only in
their learning rate were the same training and the second post reverted TrainingAlreadyPosted)."""

from __future__ import annotations

from cli.app import _job_specs


def _specs(lr: float | None) -> list:
    return _job_specs(
        steps=300,
        interval=25,
        seed=1,
        count=2,
        lr=lr,
        batch_size=64,
        threads=1,
        model_id="digits-mlp",
        preset="digits-mlp",
        arith="repro2",
    )


def test_a_preset_takes_the_commands_learning_rate() -> None:
    own, faster = _specs(None), _specs(1.1e-3)
    assert [s.optimizer.lr for s in own] == [1e-3, 1e-3]  # the preset's own
    assert [s.optimizer.lr for s in faster] == [1.1e-3, 1.1e-3]
    assert own[0].spec_hash() != faster[0].spec_hash()  # another training of the same start
    assert own[0].seed == faster[0].seed == 1 and own[1].seed == 2


def test_without_a_preset_the_default_learning_rate_is_3e_3() -> None:
    specs = _job_specs(
        steps=300,
        interval=25,
        seed=1,
        count=1,
        lr=None,
        batch_size=64,
        threads=1,
        model_id="digits-mlp",
    )
    assert specs[0].optimizer.lr == 3e-3
