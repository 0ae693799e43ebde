"""Train a small character-level GPT on Python's own standard-library source code (no download).

An ordinary PyTorch training script: swap `import ember as torch` for `import torch` and it runs on PyTorch.
It prints a sample before and after training, a progress bar, and the train/validation loss.
"""
import argparse
import math
import os

from tqdm import tqdm

import ember as torch
import ember.nn as nn
import ember.nn.functional as F

# modules whose docstrings and code make a varied, English-and-Python corpus of about 220 KB
MODULES = ("textwrap", "string", "functools", "random", "heapq", "bisect", "fnmatch", "queue", "calendar",
           "contextlib", "abc", "copy", "glob", "shlex")


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, dropout):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)
        self.dropout = dropout
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        # B x T x C -> B x heads x T x head_size
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.proj(y))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, dropout)
        self.ln2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd),
                                 nn.Dropout(dropout))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size, n_layer=3, n_head=4, n_embd=64, dropout=0.0, tie_weights=True):
        super().__init__()
        self.block_size = block_size
        self.tok_emb = nn.Embedding(vocab_size, n_embd)
        self.pos_emb = nn.Embedding(block_size, n_embd)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(Block(n_embd, n_head, dropout) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab_size, bias=False)
        if tie_weights:
            self.head.weight = self.tok_emb.weight
        self.apply(self._init_weights)
        # scaled init of the projections into the residual stream (GPT-2)
        for name, p in self.named_parameters():
            if name.endswith(("proj.weight", "mlp.2.weight")):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        pos = torch.arange(T, device=idx.device)
        x = self.drop(self.tok_emb(idx) + self.pos_emb(pos))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.view(B * T, -1), targets.view(B * T))

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, generator=None):
        for _ in range(max_new_tokens):
            logits, _ = self(idx[:, -self.block_size:])
            probs = F.softmax(logits[:, -1, :] / temperature, dim=-1)
            idx = torch.cat([idx, torch.multinomial(probs, 1, generator=generator)], dim=1)
        return idx


def load_text():
    """The concatenated source of a few standard-library modules, from the directory of `os`, in ASCII only (a few
    modules hold Latin-1 letters that would only enlarge the vocabulary)."""
    stdlib = os.path.dirname(os.__file__)
    parts = []
    for name in MODULES:
        with open(os.path.join(stdlib, f"{name}.py"), encoding="utf-8") as f:
            parts.append(f.read())
    return "".join(c for c in "\n\n".join(parts) if c.isascii())


class CharTokenizer:
    def __init__(self, text):
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}

    def encode(self, s):
        return [self.index[c] for c in s]

    def decode(self, ids):
        return "".join(self.chars[i] for i in ids)


def get_batch(data, batch_size, block_size, device):
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i:i + block_size] for i in ix.tolist()])
    y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix.tolist()])
    return x.to(device), y.to(device)


@torch.no_grad()
def estimate_loss(model, splits, batch_size, block_size, device, eval_iters, seed):
    """Mean loss over the same `eval_iters` batches of each split every time, so successive values compare."""
    model.eval()
    rng_state = torch.get_rng_state()
    torch.manual_seed(seed)
    losses = {}
    for name, data in splits.items():
        total = 0.0
        for _ in range(eval_iters):
            x, y = get_batch(data, batch_size, block_size, device)
            total += model(x, y)[1].item()
        losses[name] = total / eval_iters
    torch.set_rng_state(rng_state)
    model.train()
    return losses


def lr_lambda(warmup, steps, min_ratio=0.1):
    """Linear warm-up to the full learning rate, then a cosine decay to `min_ratio` of it."""
    def factor(step):
        if step < warmup:
            return (step + 1) / warmup
        progress = min(1.0, (step - warmup) / max(1, steps - warmup))
        return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))
    return factor


def sample(model, tokenizer, prompt, length, temperature, seed, device):
    generator = torch.Generator(device=device).manual_seed(seed)
    idx = torch.tensor([tokenizer.encode(prompt)], dtype=torch.long, device=device)
    was_training = model.training
    model.eval()
    out = model.generate(idx, length, temperature=temperature, generator=generator)
    model.train(was_training)
    return tokenizer.decode(out[0].tolist())


def main(steps=1000, n_layer=3, n_head=4, n_embd=64, block_size=64, batch_size=32, lr=3e-3, weight_decay=0.1,
         dropout=0.0, tie_weights=True, warmup=None, eval_iters=10, sample_len=300, temperature=0.8,
         prompt="def ", device="cpu", seed=0, threads=None):
    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(seed)
    text = load_text()
    tokenizer = CharTokenizer(text)
    data = torch.tensor(tokenizer.encode(text), dtype=torch.long)
    split = int(0.9 * len(data))
    splits = {"train": data[:split], "val": data[split:]}
    print(f"{len(text):,} characters of standard-library source, vocabulary of {len(tokenizer.chars)}")

    model = GPT(len(tokenizer.chars), block_size, n_layer, n_head, n_embd, dropout, tie_weights).to(device)
    print(f"{sum(p.numel() for p in model.parameters()):,} parameters")
    # weight decay on matrices only, not on biases and LayerNorm parameters
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=lr, betas=(0.9, 0.99))
    warmup = max(1, steps // 10) if warmup is None else warmup
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda(warmup, steps))

    def report(label):
        losses = estimate_loss(model, splits, batch_size, block_size, device, eval_iters, seed + 1)
        print(f"{label}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        return losses

    print(f"--- sample before training ---\n{sample(model, tokenizer, prompt, sample_len, temperature, seed, device)}")
    first = report("step 0")
    bar = tqdm(range(steps), desc="training")
    for step in bar:
        x, y = get_batch(splits["train"], batch_size, block_size, device)
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        if step % 10 == 0:
            bar.set_postfix(loss=f"{loss.item():.4f}", lr=f"{scheduler.get_last_lr()[0]:.2e}")
    bar.close()
    final = report(f"step {steps}")
    print(f"--- sample after training ---\n{sample(model, tokenizer, prompt, sample_len, temperature, seed, device)}")
    return {"initial": first, "final": final}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--n-layer", type=int, default=3)
    parser.add_argument("--n-head", type=int, default=4)
    parser.add_argument("--n-embd", type=int, default=64)
    parser.add_argument("--block-size", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--weight-decay", type=float, default=0.1)
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--untied", action="store_true", help="give the output head its own weights")
    parser.add_argument("--eval-iters", type=int, default=10)
    parser.add_argument("--sample-len", type=int, default=300)
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, help="CPU threads (default: the library's choice)")
    args = parser.parse_args()
    main(steps=args.steps, n_layer=args.n_layer, n_head=args.n_head, n_embd=args.n_embd, block_size=args.block_size,
         batch_size=args.batch_size, lr=args.lr, weight_decay=args.weight_decay, dropout=args.dropout,
         tie_weights=not args.untied, eval_iters=args.eval_iters, sample_len=args.sample_len,
         temperature=args.temperature, device=args.device, seed=args.seed, threads=args.threads)
