"""The commented evolve.toml that `evolve init` writes."""

STARTER = '''\
# evolve.toml: what to evolve, how to judge it, and how much to spend.
# Paths are relative to this file. `evolve start` reads it; `evolve start --help` lists overrides.

[problem]
kernel_dir = "kernel"              # the only directory candidates may change
seeds = ["seed_kernels/naive"]     # each seed directory is copied into kernel_dir as a first candidate
# guidance = "GUIDANCE.md"         # hints for the LLM (algorithms that worked, pitfalls)

[evaluation]
builtin = "qr"                     # the QR harness shipped with evolve; or instead:
# command = "{python} check.py --kernel-dir {kernel_dir}"   # prints one JSON result line last; split like a
                                   # shell line but not run by a shell (no pipes, no $VARS); {python},
                                   # {kernel_dir} and {mode} are filled in
# files = ["check.py"]             # what `command` needs, taken from the run's base commit
mode = "full"                      # quick | full | final (QR harness)
confirm_mode = "final"             # a would-be new best is re-measured in this mode before `best` moves
gpus = "auto"                      # or [0, 1]: one evaluation slot per GPU
# per_gpu = 2                      # built-in harness: evaluations sharing each GPU, tested side by side and
                                   # timed one at a time (default 1)
timeout_s = 600                    # a candidate still running then is killed (status: timeout)
# prestart = true                  # start the next evaluation's process (imports, start-up) while one runs;
                                   # on by default for the built-in harness; a command must then wait for a
                                   # line on stdin before it reads {kernel_dir} (examples/sort/check.py does)
sandbox = "on"                     # every evaluation in its own namespaces: no view of your files, keys,
                                   # processes or network (docs/SECURITY.md); "off" only where none is possible
# network = false                  # inside the sandbox
# backend = "ray"                  # evaluations as tasks on a Ray cluster (pip install -e '.[ray]')
# address = "auto"                 # ... at this address (ray.init)

[llm]
# base_url = "http://127.0.0.1:8000/v1"   # any OpenAI-compatible server (OpenAI, vLLM, llama.cpp, Ollama)
# model = "gpt-4.1-mini"
# input_usd_per_mtok = 0.4
# output_usd_per_mtok = 1.6
# models = [                       # or several models, drawn by weight (the bandit learns which pays off)
#   { name = "gpt-4.1", weight = 1, input_usd_per_mtok = 2.0, output_usd_per_mtok = 8.0 },
#   { name = "gpt-4.1-mini", weight = 3, input_usd_per_mtok = 0.4, output_usd_per_mtok = 1.6 },
# ]
api_key_env = "OPENAI_API_KEY"     # the key is read from this variable; "" for servers without keys
temperature = 0.7
max_tokens = 8192
timeout_s = 120
# max_concurrent = 4              # requests in flight (default: 2 per evaluation slot, at least 4)
context_tokens = 128000            # prompt + reply must fit here (the QR seed's prompt: about 47k)

[evolution]
operators = { mutate = 0.6, fix = 0.1, tune = 0.3 }   # without an LLM, tune runs alone; cross: crossovers
islands = 2                        # sub-populations that evolve apart ...
migrate_every = 16                 # ... and every 16 children each gets the best of the previous one
population = 8                     # the elite of an island that parents are drawn from
seed = 0
# bandit = true                    # learn which (operator, model) improves most per dollar (false: fixed weights)
# eval_usd = 0.01                  # what one evaluation is taken to cost (GPU time), for that learning

[budget]
max_candidates = 200
# max_usd = 10.0
# max_hours = 8
'''
