#!/usr/bin/env bash
# frameworks.sh - issue 14 on a GPU: small loops of unmodified PyTorch, CuPy
# and Triton programs, each without a host synchronization inside the loop
# (`nosync`: steps queued back to back, one read-back at the end) and with
# one per step (`sync`), run without the shim and with it (LD_PRELOAD of
# libreprise.so, REPRISE=1, REPRISE_STATS). For each loop it prints whether
# the results are identical (a hash of the final tensors), the replayed share
# (from the stats file) and the time per step of both runs.
#   PyTorch: a 12-layer MLP training step (forward, MSE loss, backward, SGD
#            update by hand): about 50 kernels a step, cuBLAS included;
#   CuPy:    32 in-place elementwise kernels a step, with a fixed scalar and
#            (nosync-scalar) with one that changes every step;
#   Triton:  16 launches a step of a jitted axpby kernel on torch tensors;
#   generate (issue 17): Hugging Face generate(), greedy, a random 6-layer
#            GPT-2, with the dynamic (growing) and the static KV cache; a
#            step is a token.
# Each loop is also recorded with REPRISE_TRACE (the engine off) into $OUT
# and its trace replayed by `reprise replay` without and with the shim
# (issue 29): the size, both replays' wall time and the share replayed.
# A framework that does not import, or a machine without a GPU, is skipped
# with one line; the script then exits 0. Exit 1 when a loop failed, printed
# different results with the shim, or the shim warned (a `reprise:` line).
#
#   tests/gpu/frameworks.sh [BUILD_DIR]     (default build-gpu; logs in $OUT)
# STEPS (default 200) steps are timed after WARM (default 20) that are not.
set -u
cd "$(dirname "$0")/../.." || exit 1
build=${1:-${BUILD:-build-gpu}}
out=${OUT:-$build/out}
py=${PYTHON:-python3}
steps=${STEPS:-200}
warm=${WARM:-20}
mkdir -p "$out"
shim=$(cd "$build/lib" 2>/dev/null && pwd)/libreprise.so
reprise=$(cd "$build/bin" 2>/dev/null && pwd)/reprise
fails=0
# cuBLAS picks a reproducible algorithm only with a fixed workspace.
export CUBLAS_WORKSPACE_CONFIG=:4096:8

row() { printf "%-34s %s\n" "$1" "$2"; }

# ---- the loops, one Python file each: LOOP VARIANT STEPS WARM ------------
# Each prints `result <sha256 of the final tensors>` and `us_per_step <x>`.
cat >"$out/fw_torch.py" <<'EOF'
# A 12-layer MLP training step; nosync: no read-back inside the loop.
import hashlib, sys, time
import torch
variant, steps, warm = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
torch.backends.cuda.matmul.allow_tf32 = False
dev = torch.device("cuda")
layers = [torch.nn.Linear(256, 256) for _ in range(12)]
model = torch.nn.Sequential(*[m for l in layers for m in (l, torch.nn.ReLU())]).to(dev)
x = torch.randn(64, 256, device=dev)
target = torch.randn(64, 256, device=dev)
lr = 1e-3

def step():
    out = model(x)
    loss = torch.nn.functional.mse_loss(out, target)
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p.sub_(lr * p.grad)
            p.grad = None
    if variant == "sync":
        loss.item()          # one read-back per step

for _ in range(warm):
    step()
torch.cuda.synchronize()
t0 = time.perf_counter()
for _ in range(steps):
    step()
torch.cuda.synchronize()
t = time.perf_counter() - t0
h = hashlib.sha256()
for p in model.parameters():
    h.update(p.detach().cpu().contiguous().numpy().tobytes())
print("result", h.hexdigest())
print("us_per_step %.1f" % (t * 1e6 / steps))
EOF

cat >"$out/fw_cupy.py" <<'EOF'
# 32 in-place elementwise kernels a step; nosync-scalar: a scalar that
# changes every step; sync: one read-back per step.
import hashlib, sys, time
import cupy as cp
variant, steps, warm = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
n = 1 << 16
x = cp.arange(n, dtype=cp.float32) / n
y = cp.ones(n, dtype=cp.float32)
k = [0]

def step():
    a = 0.999 if variant != "nosync-scalar" else 0.999 - 1e-6 * (k[0] % 7)
    for _ in range(16):
        cp.multiply(x, cp.float32(a), out=x)
        cp.add(x, y, out=x)
    if variant == "sync":
        float(x[0])          # one read-back per step
    k[0] += 1

for _ in range(warm):
    step()
cp.cuda.Device().synchronize()
t0 = time.perf_counter()
for _ in range(steps):
    step()
cp.cuda.Device().synchronize()
t = time.perf_counter() - t0
print("result", hashlib.sha256(cp.asnumpy(x).tobytes()).hexdigest())
print("us_per_step %.1f" % (t * 1e6 / steps))
EOF

cat >"$out/fw_triton.py" <<'EOF'
# 16 launches a step of a jitted kernel, alternating its two buffers.
import hashlib, sys, time
import torch
import triton
import triton.language as tl
variant, steps, warm = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

@triton.jit
def axpby(x_ptr, y_ptr, n, a, b, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(y_ptr + offs, x * a + y * b, mask=m)

n = 1 << 16
u = torch.arange(n, device="cuda", dtype=torch.float32) / n
v = torch.ones(n, device="cuda", dtype=torch.float32)
grid = (triton.cdiv(n, 1024),)

def step():
    for i in range(16):
        src, dst = (u, v) if i % 2 == 0 else (v, u)
        axpby[grid](src, dst, n, 0.25, 0.75, BLOCK=1024)
    if variant == "sync":
        u[0].item()          # one read-back per step

for _ in range(warm):
    step()
torch.cuda.synchronize()
t0 = time.perf_counter()
for _ in range(steps):
    step()
torch.cuda.synchronize()
t = time.perf_counter() - t0
h = hashlib.sha256(u.cpu().numpy().tobytes())
h.update(v.cpu().numpy().tobytes())
print("result", h.hexdigest())
print("us_per_step %.1f" % (t * 1e6 / steps))
EOF

cat >"$out/fw_generate.py" <<'EOF'
# Issue 17: Hugging Face generate(), greedy, on a randomly initialised
# 6-layer GPT-2 (no download): `dynamic` (the default cache: shapes grow
# every token) or `static` (cache_implementation="static": fixed shapes, a
# position that changes). STEPS new tokens timed after a warm generate of
# WARM tokens. Prints `skip <why>` when this transformers cannot do it.
import hashlib, sys, time
import torch
variant, steps, warm = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
try:
    from transformers import GPT2Config, GPT2LMHeadModel
except Exception as e:  # not installed, or broken
    print("skip transformers does not import:", type(e).__name__)
    sys.exit(0)
torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
torch.backends.cuda.matmul.allow_tf32 = False
cfg = GPT2Config(n_layer=6, n_embd=256, n_head=4, n_positions=1024, vocab_size=50257)
model = GPT2LMHeadModel(cfg).to("cuda").eval()
prompt = torch.randint(0, cfg.vocab_size, (1, 16), device="cuda")
kw = dict(do_sample=False, pad_token_id=0, eos_token_id=None)
if variant == "static":
    kw["cache_implementation"] = "static"

def gen(n):
    with torch.no_grad():
        return model.generate(prompt, max_new_tokens=n, min_new_tokens=n, **kw)

try:
    gen(warm)
except Exception as e:
    print("skip generate(%s) failed without being timed: %s: %s" % (variant, type(e).__name__, str(e)[:120]))
    sys.exit(0)
torch.cuda.synchronize()
t0 = time.perf_counter()
out = gen(steps)
torch.cuda.synchronize()
t = time.perf_counter() - t0
print("result", hashlib.sha256(out.cpu().numpy().tobytes()).hexdigest())
print("us_per_step %.1f" % (t * 1e6 / steps))
EOF

# ---- run them ---------------------------------------------------------------
echo "# reprise frameworks (issue 14): $(date -u +%Y-%m-%dT%H:%MZ), $steps steps timed after $warm"
gpu=1
nvidia-smi -L >/dev/null 2>&1 || gpu=0

# field FILE NAME -> the value after NAME on its line
field() { sed -n "s/^$2 //p" "$1" | head -n 1; }
share() { # share STATS.json -> replayed_share
  "$py" -c 'import json,sys; print("%.4f" % json.load(open(sys.argv[1])).get("replayed_share", 0))' "$1" \
    2>/dev/null || echo "?"
}

for fw in torch cupy triton generate; do
  case $fw in
    torch)  imports="import torch"; variants="nosync sync" ;;
    cupy)   imports="import cupy"; variants="nosync nosync-scalar sync" ;;
    triton) imports="import torch, triton"; variants="nosync sync" ;;
    generate) imports="import torch, transformers"; variants="dynamic static" ;;
  esac
  if ! "$py" -c "$imports" >/dev/null 2>&1; then
    row "$fw" "skip: '$py -c \"$imports\"' failed: not importable"
    continue
  fi
  if [ $gpu -eq 0 ]; then
    row "$fw" "skip: no GPU (nvidia-smi -L failed)"
    continue
  fi
  if [ ! -f "$shim" ]; then
    row "$fw" "FAIL: $shim is not built"; fails=$((fails + 1)); continue
  fi
  for v in $variants; do
    name="$fw $v"
    a=$out/fw-$fw-$v.absent
    s=$out/fw-$fw-$v.shim
    st=$out/fw-$fw-$v.stats.json
    rm -f "$st"
    timeout 300 "$py" "$out/fw_$fw.py" "$v" "$steps" "$warm" >"$a" 2>&1; ra=$?
    LD_PRELOAD="$shim" REPRISE=1 REPRISE_STATS="$st" \
      timeout 300 "$py" "$out/fw_$fw.py" "$v" "$steps" "$warm" >"$s" 2>&1; rs=$?
    w=$(grep -m 1 '^reprise: ' "$s")
    ea=$(field "$a" us_per_step); es=$(field "$s" us_per_step)
    if [ $ra -eq 0 ] && [ -n "$(field "$a" skip)" ]; then
      row "$name" "skip: $(field "$a" skip)"
    elif [ $ra -ne 0 ] || [ $rs -ne 0 ] || [ -z "$(field "$a" result)" ]; then
      row "$name" "FAIL: exit $ra without, $rs with the shim (see $a, $s)"
      fails=$((fails + 1))
    elif [ -n "$w" ]; then
      row "$name" "FAIL: the shim warned: $w"
      fails=$((fails + 1))
    elif [ "$(field "$a" result)" != "$(field "$s" result)" ]; then
      row "$name" "FAIL: different results with the shim"
      fails=$((fails + 1))
    else
      row "$name" "same, replayed $(share "$st"), eager $ea us/step, reprise $es us/step ($(
        awk -v a="$ea" -v s="$es" 'BEGIN{ if (a > 0) printf "%.2fx", s / a; else print "?" }'))"
      # Issue 29: the same loop recorded (engine off) and its trace replayed
      # without and with the shim: the stream's launch-bound time itself.
      t=$out/fw-$fw-$v.rptrace
      rm -f "$t"
      LD_PRELOAD="$shim" REPRISE_TRACE="$t" \
        timeout 300 "$py" "$out/fw_$fw.py" "$v" "$steps" "$warm" >"$out/fw-$fw-$v.traced" 2>&1; rt=$?
      tst=$out/fw-$fw-$v.replay-stats.json
      "$reprise" replay "$t" --no-shim >"$out/fw-$fw-$v.replay" 2>&1; r1=$?
      "$reprise" replay "$t" --shim --stats "$tst" >"$out/fw-$fw-$v.replay-shim" 2>&1; r2=$?
      if [ $rt -ne 0 ] || [ $r1 -ne 0 ] || [ $r2 -ne 0 ]; then
        row "$name trace" "FAIL: exit $rt recording, $r1/$r2 replaying (see $out/fw-$fw-$v.replay*)"
        fails=$((fails + 1))
      else
        rtime() { sed -n 's/.* in \([0-9.]*\) s (recorded.*/\1/p' "$1" | head -n 1; }
        row "$name trace" "$(( $(wc -c <"$t") / 1024 )) KiB, replay $(rtime "$out/fw-$fw-$v.replay") s, under the shim $(rtime "$out/fw-$fw-$v.replay-shim") s, replayed $(share "$tst")"
      fi
    fi
  done
done
[ "$fails" -eq 0 ]
