"""Writes the ~100k-token chat request of the large-prompt runs (bench/run.sh, bench/ab.sh).

About 400 KB of English-like text (4 bytes per token is the usual rule for GPT tokenizers),
split over a system prompt, a long user turn and a short question; seeded, so every run and
every script sends the same bytes. Usage: python3 bench/large_prompt.py OUT.json
"""
import json
import random
import sys

random.seed(7)
words = ("the quick brown fox jumps over lazy dog gateway stream token request latency "
         "upstream provider budget route model prompt context window summary analysis report "
         "customer invoice shipment delay weather forecast history chapter section table").split()


def text(n_bytes):
    out, size = [], 0
    while size < n_bytes:
        w = random.choice(words)
        out.append(w)
        size += len(w) + 1
    return " ".join(out)


body = {"model": "bench-model", "max_tokens": 16, "messages": [
    {"role": "system", "content": "You summarise documents. " + text(40_000)},
    {"role": "user", "content": "Document:\n" + text(360_000)},
    {"role": "user", "content": "Summarise the document above in one sentence."}]}
with open(sys.argv[1], "w") as f:
    f.write(json.dumps(body))
