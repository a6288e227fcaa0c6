"""The spec hashes of the presets as first committed: a field added to `JobSpec` later (the
Llama family, `micro_batches`, ...) must leave every one of them unchanged.

Run: not a script; ``from tests.utils.spec_hashes import PRESET_SPEC_HASHES``.
"""

from __future__ import annotations

PRESET_SPEC_HASHES: dict[tuple[str, str], str] = {
    ("digits-mlp", "native"): "cb585e4f7033c623195d2b9a8518f664931fb1e6ce9a0d92a752765db3955c03",
    ("digits-mlp", "repro2"): "2829e4c3030eabb3e20d10959e99f079fa4ed560ccfa2defd804bb33274c0fe4",
    ("digits-mlp-wide", "native"): (
        "c7f859a4ecb1ce89a54446ac721d7efde8cc588ecc1a54803074c70092214436"
    ),
    ("digits-mlp-wide", "repro2"): (
        "7f7918f8e88a03b023961ea5d743dd3cf709a5c9084b638ceed304b917a8bf52"
    ),
    ("shakespeare-char", "native"): (
        "8361597ccab7c688e1a352629a2f333f903ceb253d135789562550ac352c9118"
    ),
    ("shakespeare-char", "repro2"): (
        "cdc50bc21f5d0c9cfb7947dec4f3dace9f7f97def2461c3330c220576c3e387d"
    ),
    ("llama-char", "native"): "978e33edd8b852a3e1cc4579f7c9b5e2f93ed704a63d621a9feec1d51fd2ad85",
    ("llama-char", "repro2"): "1f6c80eff824c7cf2c48f0378d4bc779459c52935dbef246740e204cbb173d6f",
    ("llama-bible", "native"): ("24494a82326bdf0e04900dd0d31034de033681ce6eae53e6a3761d63a60a3373"),
    ("llama-bible", "repro2"): ("1b938742147e5d42640010c5854d194d5d349928f943220c2668fe2e13564af5"),
}
