# Gathers results.json from the runs (see README.md):
#   jq -n --slurpfile f1 runs/fixed/seed1/result.json --slurpfile f2 runs/fixed/seed2/result.json \
#     --slurpfile f3 runs/fixed/seed3/result.json --slurpfile a1 runs/adaptive/seed1/result.json \
#     --slurpfile a2 runs/adaptive/seed2/result.json --slurpfile a3 runs/adaptive/seed3/result.json \
#     --slurpfile p1 runs/pilot/q0.1-lr0.5/result.json --slurpfile p2 runs/pilot/q0.1-lr2/result.json \
#     --slurpfile p3 runs/pilot/q0.5-lr0.5/result.json --slurpfile p4 runs/pilot/q0.5-lr0.1/result.json \
#     --argjson balle "$($P)" --argjson classical "$($P --classical)" --argjson gdp "$($P --accountant gdp)" \
#     --argjson prv "$($P --accountant prv)" -f results.jq > results.json
# with P="psclip privacy --sample-rate 0.034133333333333335 --noise-multiplier 2.15 --steps 1200 --delta 1e-5 --json".
def run: {seed: .config.seed, private, test_acc, epsilon, delta, epochs, steps: (.epochs * 30),
  train_time_s, epoch_s_mean: ([.curve[].epoch_s] | add / length), epoch_s_min: ([.curve[].epoch_s] | min),
  clip_norm_by_epoch: [.curve[].clip_norm // empty], test_acc_by_epoch: [.curve[].test_acc], provenance};
def set(rs): {runs: [rs[] | run], mean_test_acc: ([rs[].test_acc] | add / length),
  epoch_s_mean: ([rs[] | run | .epoch_s_mean] | add / length), epoch_s_min: ([rs[] | run | .epoch_s_min] | min)};
def pilot: {target_quantile: .config.target_quantile, lr: .config.lr, val_acc: .curve[-1].val_acc, test_acc,
  clip_norm_by_epoch: [.curve[].clip_norm // empty], private, provenance};
# The paired difference adaptive − fixed by seed: mean and 95 % t-interval (t(0.975, 2) = 4.302653).
def paired(a; b): [a, b] | transpose | map(.[0] - .[1]) as $d | ($d | add / length) as $m
  | ((($d | map((. - $m) * (. - $m)) | add) / 2) | sqrt) as $sd
  | {n: 3, diffs: $d, mean: $m, sd: $sd, ci95: [$m - 4.302653 * $sd / (3 | sqrt), $m + 4.302653 * $sd / (3 | sqrt)]};
{
  study: "DP-SGD at Tramèr & Boneh's N = 60,000 with secret Poisson sampling: their tanh CNN and settings (σ = 2.15, C = 0.1, batch 2048, lr 4, momentum 0.9, 40 epochs), and private adaptive clipping (Andrew et al. 2021) at the same σ, q and steps, hence the same ε",
  paper: {test_acc: 0.860, epochs: 40, noise_multiplier: 2.15, sample_rate: (2048/60000), steps: 1172, epsilon_rdp_balle: 2.60548, epsilon_rdp_classical: 3.01842},
  accountants: {sample_rate: (2048/60000), steps: 1200, noise_multiplier: 2.15, delta: 1e-5,
    rdp_balle: $balle.epsilon, rdp_classical: $classical.epsilon, gdp: $gdp.epsilon, prv: $prv.epsilon},
  fixed: set([$f1[0], $f2[0], $f3[0]]),
  adaptive: (set([$a1[0], $a2[0], $a3[0]]) + {target_quantile: $a1[0].config.target_quantile, lr: $a1[0].config.lr,
    paired_test_acc_vs_fixed: paired([$a1[0], $a2[0], $a3[0]] | map(.test_acc); [$f1[0], $f2[0], $f3[0]] | map(.test_acc))}),
  pilot: {how: "10 epochs, seed 1, 6,000 of the 60,000 images held out for validation (--val-fraction 0.1, --release-unprotected: tuning runs, not private); the (q, lr) of best final validation accuracy is the adaptive runs'",
    runs: [$p1[0], $p2[0], $p3[0], $p4[0]] | map(pilot)}
}
