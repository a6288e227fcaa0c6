"""ADVERSARY BEHAVIOURS, for testing the protocol only: what a cheating solver does.

An honest node never calls these. The demo's cheating solvers and the tests use them to
produce checkpoint sequences that verification by replay must catch (Proof-of-Learning,
Jia et al. 2021, section on spoofing): a skipped step leaves the weights unchanged while the
step counter advances (saving compute); perturbed weights stand for a forged or tampered state.

Run: not a script; `from adversary.training import skip_step, perturb_weights`.
"""

from __future__ import annotations

import torch

from veritrain.training import TrainState

__all__ = ["perturb_weights", "skip_step"]


def skip_step(state: TrainState) -> None:
    """ADVERSARY: advance `state.step` by one without any optimizer update.

    Args:
        state: modified in place (step + 1; weights and optimizer state unchanged).
    """
    state.step += 1


@torch.no_grad()
def perturb_weights(state: TrainState, std: float = 1e-3, seed: int = 0) -> None:
    """ADVERSARY: add seeded gaussian noise N(0, std^2) to every model parameter, in place.

    Args:
        state: the state to tamper with (optimizer state and step unchanged).
        std: noise standard deviation, in parameter units.
        seed: seed of a private CPU generator (the global RNG is untouched).
    """
    gen = torch.Generator(device="cpu").manual_seed(seed)
    for param in state.model.parameters():
        noise = torch.randn(param.shape, generator=gen, dtype=torch.float64) * std
        param.add_(noise.to(device=param.device, dtype=param.dtype))
