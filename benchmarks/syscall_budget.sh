#!/bin/bash
# System calls per file of each fastcopy mode and of cp -a: 3,000 files of
# 6,000 random bytes in 30 directories, warm, each into a fresh destination.
# Usage: budget.sh FASTCOPY-BINARY WORKDIR
set -euo pipefail
fc=$(realpath "$1"); w=$2
mkdir -p "$w" && cd "$w"
if [ ! -d src ]; then
  for d in $(seq -w 0 29); do
    mkdir -p src/d$d
    for f in $(seq -w 0 99); do head -c 6000 /dev/urandom > src/d$d/f$f; done
  done
fi
run=$(date +%s%N)
strace -f -c -o st-default.txt "$fc" -q --cache "$w/c-$run-d.db" src dst-$run-default
strace -f -c -o st-cache.txt "$fc" -q --verify=cache --cache "$w/c-$run-c.db" src dst-$run-cache
strace -f -c -o st-off.txt "$fc" -q --verify=off --cache "$w/c-$run-o.db" src dst-$run-off
strace -f -c -o st-plain.txt "$fc" -q --verify=off --dedup=off --no-cache src dst-$run-plain
strace -f -c -o st-cp.txt cp -a src dst-$run-cp
python3 - <<'PY'
import re
modes = ['default', 'cache', 'off', 'plain', 'cp']
data = {}
for m in modes:
    d = {}
    for line in open(f'st-{m}.txt'):
        f = line.split()
        if len(f) < 5 or not re.match(r'^[0-9.]+$', f[0]):
            continue
        d[f[-1]] = int(f[3])
    data[m] = d
names = sorted({k for m in modes for k, v in data[m].items() if k != 'total' and v >= 300},
               key=lambda k: -max(data[m].get(k, 0) for m in modes))
print('| system call | ' + ' | '.join(modes) + ' |')
print('|---|' + '---:|' * len(modes))
for k in names + ['total']:
    print(f'| {k} | ' + ' | '.join(f"{data[m].get(k, 0) / 3000:.2f}" for m in modes) + ' |')
PY
