"""`job submit`'s spec builder: a preset takes the command's learning rate when one is given
(before, `--lr` was silently ignored with `--preset`, so two preset jobs that differ only in
their learning rate were the same training and the second post reverted TrainingAlreadyPosted)."""

from __future__ import annotations

from cli.jobs import _job_specs


def _specs(lr: float | None, preset: str | None = "digits-mlp", count: int = 2) -> list:
    return _job_specs(
        steps=300,
        interval=25,
        seed=1,
        count=count,
        lr=lr,
        batch_size=64,
        threads=1,
        model_id="digits-mlp",
        preset=preset,
        arith="repro2" if preset else "native",
    )


def test_a_preset_takes_the_commands_learning_rate() -> None:
    own, faster = _specs(None), _specs(1.1e-3)
    assert [s.optimizer.lr for s in own] == [1e-3, 1e-3]  # the preset's own
    assert [s.optimizer.lr for s in faster] == [1.1e-3, 1.1e-3]
    assert own[0].spec_hash() != faster[0].spec_hash()  # another training of the same start
    assert own[0].seed == faster[0].seed == 1 and own[1].seed == 2


def test_without_a_preset_the_default_learning_rate_is_3e_3() -> None:
    assert _specs(None, preset=None, count=1)[0].optimizer.lr == 3e-3
