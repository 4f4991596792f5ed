# compare_curves.awk — the GPU's loss curve against the CPU's in a metrics.csv
# (device,epoch,loss): the largest relative difference over epochs 1..n, and whether it is
# within tol. Used by scripts/gpusim-check.sh and scripts/gpu/gpu-check.sh:
#   awk -F, -v n=20 -v tol=1e-4 -f scripts/compare_curves.awk RUN/metrics.csv
# Prints one line; exits 1 when an epoch is missing, a loss is not a finite number, or the
# difference exceeds tol.
NR > 1 && $2 <= n {
  if ($3 !~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/) nonfinite = nonfinite " " $1 "@" $2
  if ($1 == "cpu") c[$2] = $3; else if ($1 == "gpu") g[$2] = $3
}
END {
  m = 0; at = 0; k = 0
  for (e = 1; e <= n; e++) {
    if (!(e in c) || !(e in g)) continue
    k++; d = c[e] - g[e]; if (d < 0) d = -d
    a = c[e] < 0 ? -c[e] : c[e]; r = a > 0 ? d / a : d
    if (r > m) { m = r; at = e }
  }
  where = m > 0 ? sprintf("at epoch %d", at) : "every epoch bit-identical"
  printf "largest relative difference %.3g (%s; %d of %d epochs compared%s)\n", m, where, k, n,
         nonfinite == "" ? "" : "; not finite:" nonfinite
  exit (k < n || m > tol || nonfinite != "") ? 1 : 0
}
