#!/bin/bash
# measure.sh BINARY TAG [RANKS...]: peak RSS and wall time of every rank of `heom run` on the
# 1,961,256-ADO spin-boson hierarchy, one OpenMP thread per rank, oversubscribed on this machine.
# Prints "TAG P=<ranks> <peak KB> KB <seconds> s" per rank.
bin=$1; tag=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
export OMP_PROC_BIND=false OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp -d)
for p in "${@:-1 2 4 8 16}"; do
  mpirun -n "$p" --oversubscribe /usr/bin/time -f "$tag P=$p %M KB %e s" "$bin" run "$here/wide_spin_boson.toml" \
    -o "$out/wide_$p.h5" 2>&1 >/dev/null | grep " KB "
done
rm -rf "$out"
