# Run with: jq -n --slurpfile a1 runs-15/seed1/result.json --slurpfile a2 runs-15/seed2/result.json
#   --slurpfile a3 runs-15/seed3/result.json --slurpfile b1 runs-20/seed1/result.json
#   --slurpfile b2 runs-20/seed2/result.json --slurpfile b3 runs-20/seed3/result.json
#   --slurpfile c1 runs-40/seed1/result.json --slurpfile c2 runs-40/seed2/result.json
#   --slurpfile c3 runs-40/seed3/result.json
#   --slurpfile st step-time.json -f results.jq > results.json
def run: {seed: .config.seed, private: (.private // false), test_acc, epsilon, delta, noise_multiplier: .config.noise_multiplier,
  epochs, steps: (.epochs * 27), epoch_s_mean: ([.curve[].epoch_s] | add / length),
  epoch_s_min: ([.curve[].epoch_s] | min), epoch_s_max: ([.curve[].epoch_s] | max), test_acc_by_epoch: [.curve[].test_acc]}
  # a private run withholds what ε does not cover (its training and validation figures)
  + (if .private then {} else {val_acc, train_acc} end);
def set(rs; accountants; prov): {runs: [rs[] | run], mean_test_acc: ([rs[].test_acc] | add / length), accountants: accountants, provenance: prov};
{
  study: "DP-SGD, Tramèr & Boneh (ICLR 2021) tanh CNN on Fashion-MNIST (δ = 1e-5): the paper's 40 epochs at σ = 2.15 (ε = 2.80 at N = 54,000), and 15 and 20 epochs at ε = 3",
  paper: {test_acc: 0.860, epochs: 40, noise_multiplier: 2.15, sample_rate: (2048/60000), steps: 1172, epsilon_rdp_balle: 2.60548, epsilon_rdp_classical: 3.01842},
  "15_epochs": set([$a1[0], $a2[0], $a3[0]];
    {sample_rate: (2048/54000), steps: 405, noise_multiplier: 1.416015625, delta: 1e-5, rdp_balle: 2.99051, rdp_classical: 3.46482, gdp: 2.50807, prv: 2.72433};
    ($a1[0].provenance + {note: "each run's own record is in runs-15/seedN/result.json; private runs (secret Poisson samples and noise); the seeds ran one after another, GOMAXPROCS=1, beside two study lanes"})),
  "20_epochs": set([$b1[0], $b2[0], $b3[0]];
    {sample_rate: (2048/54000), steps: 540, noise_multiplier: 1.56005859375, delta: 1e-5, rdp_balle: 2.99483, rdp_classical: 3.45962, gdp: 2.57491, prv: 2.7411};
    ($b1[0].provenance + {note: "each run's own record is in runs-20/seedN/result.json; private runs (secret Poisson samples and noise); the seeds ran one after another, GOMAXPROCS=1, beside two study lanes"})),
  "40_epochs": set([$c1[0], $c2[0], $c3[0]];
    {sample_rate: (2048/54000), steps: 1080, noise_multiplier: 2.15, delta: 1e-5, rdp_balle: 2.80265, rdp_classical: 3.23466, gdp: 2.50242, prv: 2.58136};
    ($c1[0].provenance + {note: "each run's own record is in runs-40/seedN/result.json; the three seeds ran in parallel, GOMAXPROCS=1 each; +dirty: README.md differed from the commit"})),
  step_time: {cpu_ms_median: ($st[0].results | map({(.estimator): .cpu_ms_median}) | add), dp_over_sgd_cpu: ($st[0].results[2].cpu_ratio_to_first),
    ps_clip_over_sgd_cpu: ($st[0].results[1].cpu_ratio_to_first), file: "step-time.json", commit: $st[0].provenance.commit, kernel: $st[0].provenance.kernel}
}
