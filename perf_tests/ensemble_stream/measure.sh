#!/bin/bash
# measure.sh BINARY TAG: peak RSS of heom run on the spin-boson depth 3 ensembles, 1 rank and 4 ranks.
bin=$1; tag=$2
export OMP_PROC_BIND=false OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for m in 1000 100000; do for store in false true; do
  OMP_NUM_THREADS=1 /usr/bin/time -f "$tag 1rank m=$m store=$store %M KB %e s" $bin run sb_${m}_${store}.toml -o ${tag}_${m}_${store}_1.h5 2>&1 >/dev/null | grep KB
  OMP_NUM_THREADS=1 mpirun -n 4 --oversubscribe /usr/bin/time -f "$tag 4ranks m=$m store=$store %M KB %e s" $bin run sb_${m}_${store}.toml -o ${tag}_${m}_${store}_4.h5 2>&1 >/dev/null | grep KB
done; done
