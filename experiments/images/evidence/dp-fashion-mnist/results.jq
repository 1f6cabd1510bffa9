# Run with: jq -n --slurpfile a1 runs-15/seed1/result.json --slurpfile a2 runs-15/seed2/result.json
#   --slurpfile a3 runs-15/seed3/result.json --slurpfile b1 runs-20/seed1/result.json
#   --slurpfile b2 runs-20/seed2/result.json --slurpfile b3 runs-20/seed3/result.json
#   --slurpfile c1 runs-40/seed1/result.json --slurpfile c2 runs-40/seed2/result.json
#   --slurpfile c3 runs-40/seed3/result.json
#   --slurpfile st step-time.json -f results.jq > results.json
def run: {seed: .config.seed, test_acc, val_acc, train_acc, epsilon, delta, noise_multiplier: .config.noise_multiplier,
  epochs, steps: (.epochs * 27), epoch_s_mean: ([.curve[].epoch_s] | add / length),
  epoch_s_min: ([.curve[].epoch_s] | min), epoch_s_max: ([.curve[].epoch_s] | max), test_acc_by_epoch: [.curve[].test_acc]};
def set(rs; accountants; prov): {runs: [rs[] | run], mean_test_acc: ([rs[].test_acc] | add / length), accountants: accountants, provenance: prov};
{
  study: "DP-SGD, Tramèr & Boneh (ICLR 2021) tanh CNN on Fashion-MNIST (δ = 1e-5): the paper's 40 epochs at σ = 2.15 (ε = 2.80 at N = 54,000), and 15 and 20 epochs at ε = 3",
  paper: {test_acc: 0.860, epochs: 40, noise_multiplier: 2.15, sample_rate: (2048/60000), steps: 1172, epsilon_rdp_balle: 2.60548, epsilon_rdp_classical: 3.01842},
  "15_epochs": set([$a1[0], $a2[0], $a3[0]];
    {sample_rate: (2048/54000), steps: 405, noise_multiplier: 1.416015625, delta: 1e-5, rdp_balle: 2.99051, rdp_classical: 3.46482, gdp: 2.50807, prv: 2.72433};
    {command: ["psclip","train","images","--data","/usr/share/datasets/fashion-mnist","--model","tanh-cnn","--estimator","dp-sgd","--clip","0.1","--target-epsilon","3","--delta","1e-5","--batch","2048","--lr","4","--momentum","0.9","--weight-decay","0","--epochs","15","--seed","1|2|3","--out","seedN"],
     commit: "7262b9d688fc53a0ed2f2c566525a44315849543",
     go_version: "go1.26.8", goos: "linux", goarch: "amd64", cpu: "AMD EPYC", kernel: "avx2", threads: 1, cpus: 2,
     load_before: 33.52, load_after: 11.54, started: "2026-11-28T04:59:00Z", finished: "2026-11-28T05:52:22Z",
     note: "written from the shell: the three seeds ran in parallel, GOMAXPROCS=1 each, with a binary that predates result.json's provenance record"}),
  "20_epochs": set([$b1[0], $b2[0], $b3[0]];
    {sample_rate: (2048/54000), steps: 540, noise_multiplier: 1.56005859375, delta: 1e-5, rdp_balle: 2.99483, rdp_classical: 3.45962, gdp: 2.57491, prv: 2.7411};
    ($b1[0].provenance + {commit: "e90773621f6992dc0c7a48dcf5659c26375ef86e", note: "each run's own record is in runs-20/seedN/result.json (commit unknown there: this worktree's builds carry no VCS stamp); the three seeds ran in parallel"})),
  "40_epochs": set([$c1[0], $c2[0], $c3[0]];
    {sample_rate: (2048/54000), steps: 1080, noise_multiplier: 2.15, delta: 1e-5, rdp_balle: 2.80265, rdp_classical: 3.23466, gdp: 2.50242, prv: 2.58136};
    ($c1[0].provenance + {note: "each run's own record is in runs-40/seedN/result.json; the three seeds ran in parallel, GOMAXPROCS=1 each; +dirty: README.md differed from the commit"})),
  step_time: {cpu_ms_median: ($st[0].results | map({(.estimator): .cpu_ms_median}) | add), dp_over_sgd_cpu: ($st[0].results[2].cpu_ratio_to_first),
    ps_clip_over_sgd_cpu: ($st[0].results[1].cpu_ratio_to_first), file: "step-time.json", commit: $st[0].provenance.commit, kernel: $st[0].provenance.kernel}
}
