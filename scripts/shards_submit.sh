#!/usr/bin/env bash
# Submits a sharded run to Slurm: N shards as a job array (shard.sbatch) and
# their merge (merge.sbatch), which starts only when every task it waits for
# has succeeded (afterok). Prints the array's job id and the merge's.
#
#   CARD=cards/big.json RUNS=/shared/runs JOB=big scripts/shards_submit.sh 8
#   CARD=cards/big.json RUNS=/shared/runs JOB=big scripts/shards_submit.sh 8 5
#
# The second form submits only task 5 (any --array list: 2,5 or 3-4) and a
# new merge after it: for a task that failed or was cancelled, which leaves
# the first merge pending for ever (scancel it). The task resumes its job
# folder. Other sbatch options come from sbatch's input variables, e.g.
# SBATCH_GRES=gpu:1, SBATCH_PARTITION=gpu.
set -euo pipefail
[[ $# -ge 1 && $# -le 2 ]] || { echo "usage: CARD=... RUNS=... JOB=... $0 N [TASKS]" >&2; exit 2; }
: "${CARD:?the card}" "${RUNS:?the runs folder every node sees}" "${JOB:?the merged job name}"
here=$(cd "$(dirname "$0")" && pwd)
export CARD RUNS JOB EVALRUN_SHARD_COUNT=$1
array=$(sbatch --parsable --array="${2:-1-$1}" "$here/shard.sbatch")
merge=$(sbatch --parsable --dependency=afterok:"$array" "$here/merge.sbatch")
echo "$array $merge"
