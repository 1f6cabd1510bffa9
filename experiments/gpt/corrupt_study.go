package gpt

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/psclip/psclip/data/text"
	"github.com/psclip/psclip/internal/plotting"
	"github.com/psclip/psclip/internal/stats"
	"github.com/psclip/psclip/provenance"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/setting"
)

// Method is a clipping method of the corruption study: a clip mode with
// its convention and threshold.
type Method string

const (
	// MethodNone does not clip.
	MethodNone Method = "none"
	// MethodGlobal clips the step's accumulated gradient ḡ to the base
	// threshold (nanoGPT's γ = 1): the reference of every comparison.
	MethodGlobal Method = "global"
	// MethodMBClip clips each micro-batch's share g_j/K to γ: MB-Clip in
	// the paper's convention (ConventionNanoGPT).
	MethodMBClip Method = "mb-clip"
	// MethodMBClipMean clips each micro-batch's mean gradient g_j to γ
	// (ConventionMean), K times harder.
	MethodMBClipMean Method = "mb-clip-mean"
	// MethodPSClip clips each sequence's gradient to the constant γ the
	// study chose (CorruptionStudy.GammaGrid).
	MethodPSClip Method = "ps-clip"
	// MethodPSAuto clips each sequence's gradient to ps-clip-auto's
	// threshold σ̂·k^(1/p̂), with no threshold to tune.
	MethodPSAuto Method = "ps-clip-auto"
)

// Methods lists the methods in their command-line spelling.
var Methods = []Method{MethodNone, MethodGlobal, MethodMBClip, MethodMBClipMean, MethodPSClip, MethodPSAuto}

// ParseMethod parses a command-line method.
func ParseMethod(s string) (Method, error) {
	for _, m := range Methods {
		if string(m) == s {
			return m, nil
		}
	}
	return "", setting.Errorf("Methods", strconv.Quote(s), "none, global, mb-clip, mb-clip-mean, ps-clip or ps-clip-auto")
}

// configure returns c set up for method m, with gamma the constant
// threshold of MethodPSClip; the other clipping methods keep c.Clip.
func (m Method) configure(c Config, gamma float64) Config {
	c.ClipConvention, c.Estimator = "", ""
	switch m {
	case MethodNone:
		c.ClipMode = ClipNone
	case MethodGlobal:
		c.ClipMode = ClipGlobal
	case MethodMBClip:
		c.ClipMode, c.ClipConvention = ClipMicroBatch, ConventionNanoGPT
	case MethodMBClipMean:
		c.ClipMode, c.ClipConvention = ClipMicroBatch, ConventionMean
	case MethodPSClip:
		c.ClipMode, c.Estimator, c.Clip = ClipPerSample, "ps-clip-sgd", gamma
	case MethodPSAuto:
		c.ClipMode, c.Estimator = ClipPerSample, "ps-clip-auto"
	}
	return c.Trim()
}

// CorruptionStudy is the study of where clipping pays on corrupted text:
// every method at every corruption setting and seed, then MB-Clip's
// micro-batch count K at one setting. A seed fixes the initialisation, the
// data order and the corruption, so every method of a seed starts from the
// same weights and sees the same batches and the same corrupted sequences.
type CorruptionStudy struct {
	// Base is the configuration of every run but its corruption, clip
	// settings (Method) and seed; Base.Clip is the threshold γ of the
	// global and micro-batch methods, and Base.Accum the K of Settings'
	// runs.
	Base     Config       `json:"base"`
	Settings []Corruption `json:"settings"`
	Methods  []Method     `json:"methods"`
	Seeds    []uint64     `json:"seeds"`
	// GammaGrid are the constant thresholds MethodPSClip chooses from,
	// by the lowest mean final (clean) validation loss of PS-Clip at
	// GammaAt over GammaSeeds, seeds apart from Seeds so that the choice is
	// not made on the runs it is judged on. One value is used as it is,
	// and GammaAt and GammaSeeds, which nothing reads then, must be unset.
	GammaGrid  []float64  `json:"gamma_grid"`
	GammaAt    Corruption `json:"gamma_at"`
	GammaSeeds []uint64   `json:"gamma_seeds"`
	// Ks are the micro-batch counts of the K sweep at KAt, each splitting
	// the step's Base.MicroBatch·Base.Accum sequences into K micro-batches
	// of as many sequences each, with KMethods and Seeds. The validation
	// batches hold the same sequences at every K (EvalIters·MicroBatch
	// sequences, as Base's). No Ks, no sweep.
	Ks       []int      `json:"ks,omitempty"`
	KAt      Corruption `json:"k_at"`
	KMethods []Method   `json:"k_methods,omitempty"`
}

// CorruptionStudyDefault is the study "psclip experiment gpt-corrupt" runs
// by default, sized to finish in under an hour on a shared 2-core machine:
// ExperimentDefault's GPT (2 layers, width 64) at block 32, with 16
// sequences a step in K = 8 micro-batches of 2, 100 steps, evaluated
// every 20 steps on 64 validation sequences; F ∈ {0, 0.05, 0.2} in both
// layouts with random tokens and F = 0.2 scattered with repeated tokens;
// all six methods at γ = 1; 5 seeds; PS-Clip's γ chosen from {1, 2, 3}
// (the per-sample norms of this model lie between 1.5 and 3.5 for most
// of training) at F = 0.2 scattered on seeds 101 and 102; the K sweep
// K ∈ {1, 2, 4, 8, 16} at F = 0.2 clustered for global clipping and
// MB-Clip on mean gradients (the paper's convention holds g_j to K·γ,
// which these gradients, of norm about 2, never reach at K ≥ 2).
func CorruptionStudyDefault() CorruptionStudy {
	c := ExperimentDefault()
	c.BlockSize, c.MicroBatch, c.Accum, c.Steps, c.Warmup = 32, 2, 8, 100, 10
	c.EvalInterval, c.EvalIters = 20, 32
	c.Clip = 1
	f05, f2 := 0.05, 0.2
	return CorruptionStudy{
		Base: c,
		Settings: []Corruption{{},
			{f05, LayoutScattered, KindRandom}, {f05, LayoutClustered, KindRandom},
			{f2, LayoutScattered, KindRandom}, {f2, LayoutClustered, KindRandom},
			{f2, LayoutScattered, KindRepeat}},
		Methods:    Methods,
		Seeds:      []uint64{1, 2, 3, 4, 5},
		GammaGrid:  []float64{1, 2, 3},
		GammaAt:    Corruption{f2, LayoutScattered, KindRandom},
		GammaSeeds: []uint64{101, 102},
		Ks:         []int{1, 2, 4, 8, 16},
		KAt:        Corruption{f2, LayoutClustered, KindRandom},
		KMethods:   []Method{MethodGlobal, MethodMBClipMean},
	}
}

// stepSeqs is the number of sequences of every step.
func (s *CorruptionStudy) stepSeqs() int { return s.Base.MicroBatch * s.Base.Accum }

// config is the configuration of one run.
func (s *CorruptionStudy) config(at Corruption, k int, m Method, seed uint64, gamma float64) Config {
	c := s.Base
	c.Corruption, c.Seed = at, seed
	mb := s.stepSeqs() / k
	c.EvalIters = s.Base.EvalIters * s.Base.MicroBatch / mb
	c.MicroBatch, c.Accum = mb, k
	return m.configure(c, gamma)
}

// Check validates the study and every configuration in it. Its errors
// are *setting.Error values naming the field.
func (s *CorruptionStudy) Check() error {
	if err := setting.First(setting.Distinct("Settings", s.Settings), setting.Distinct("Methods", s.Methods),
		setting.Distinct("Seeds", s.Seeds)); err != nil {
		return err
	}
	if !slices.Contains(s.Methods, MethodGlobal) {
		return setting.Errorf("Methods", s.Methods, "a list with global, the reference of the paired comparisons")
	}
	gamma := s.Base.Clip
	if slices.Contains(s.Methods, MethodPSClip) {
		if err := setting.Distinct("GammaGrid", s.GammaGrid); err != nil {
			return err
		}
		switch {
		case len(s.GammaGrid) == 1 && len(s.GammaSeeds) > 0:
			return setting.Unread("GammaSeeds", s.GammaSeeds, "read only with two or more values in GammaGrid; one is used as it is")
		case len(s.GammaGrid) == 1 && s.GammaAt != (Corruption{}):
			return setting.Unread("GammaAt", s.GammaAt.CorruptionName(), "read only with two or more values in GammaGrid; one is used as it is")
		case len(s.GammaGrid) > 1:
			if err := setting.Distinct("GammaSeeds", s.GammaSeeds); err != nil {
				return err
			}
			for _, seed := range s.GammaSeeds {
				if slices.Contains(s.Seeds, seed) {
					return setting.Errorf("GammaSeeds", seed, "seeds apart from the study's (%v)", s.Seeds)
				}
			}
		}
		gamma = s.GammaGrid[0]
		for _, g := range s.GammaGrid {
			c := s.config(s.GammaAt, s.Base.Accum, MethodPSClip, 0, g)
			if err := c.Validate(); err != nil {
				return studyField(err, "GammaAt", "GammaGrid")
			}
		}
	}
	for _, at := range s.Settings {
		for _, m := range s.Methods {
			c := s.config(at, s.Base.Accum, m, s.Seeds[0], gamma)
			if err := c.Validate(); err != nil {
				return studyField(err, "Settings", "")
			}
		}
	}
	if len(s.Ks) == 0 {
		return nil
	}
	if err := setting.First(setting.Distinct("Ks", s.Ks), setting.Distinct("KMethods", s.KMethods)); err != nil {
		return err
	}
	if !slices.Contains(s.KMethods, MethodGlobal) {
		return setting.Errorf("KMethods", s.KMethods, "a list with global, the reference of the paired comparisons")
	}
	evalSeqs := s.Base.EvalIters * s.Base.MicroBatch
	for _, k := range s.Ks {
		if k < 1 || s.stepSeqs()%k != 0 || evalSeqs%(s.stepSeqs()/k) != 0 {
			return setting.Errorf("Ks", k, "a divisor of the step's %d sequences whose micro-batch divides the %d validation sequences", s.stepSeqs(), evalSeqs)
		}
		for _, m := range s.KMethods {
			c := s.config(s.KAt, k, m, s.Seeds[0], gamma)
			if err := c.Validate(); err != nil {
				return studyField(err, "KAt", "")
			}
		}
	}
	return nil
}

// studyField names the study's field that set a run's setting at fault
// rather than the run's: at, the field of the corruption setting (Settings,
// GammaAt, KAt), for an error in the corruption, and gamma, if set, the
// field of the threshold (GammaGrid) for one in Clip.
func studyField(err error, at, gamma string) error {
	var se *setting.Error
	switch {
	case !errors.As(err, &se):
		return err
	case strings.HasPrefix(se.Field, "Corrupt"):
		return &setting.Error{Field: at, Value: se.Value, Want: se.Want}
	case se.Field == "Clip" && gamma != "":
		return &setting.Error{Field: gamma, Value: se.Value, Want: se.Want}
	}
	return err
}

// Output files of a corruption study, in its directory; results.json is
// run.ResultsFile.
const (
	StudyTableMD  = "tables.md"
	StudyCurves   = "val_loss"       // .png and .svg: the curves per setting
	StudyDeltas   = "val_loss_delta" // .png and .svg: the curves minus global's, per setting
	StudyKFigure  = "k_sweep"        // .png and .svg: MB-Clip against global over K
	GammaRunsPath = "gamma"          // the runs of the γ choice, under run.RunsDir
)

// StudyResults is the content of a corruption study's results.json.
type StudyResults struct {
	// Provenance is the command's and its runs' (run.Experiment.Provenance).
	Provenance provenance.Record `json:"provenance"`
	Study      CorruptionStudy   `json:"study"`
	Corpus     string            `json:"corpus"`
	// TestTokens is the size of the corpus's held-out test split
	// (DataSpec.TestFraction), absent without one. With one, every run
	// reports its final test loss, each cell's Test holds them, and the
	// tables, their paired comparisons and the K figure are of the test
	// loss; PS-Clip's γ is still chosen on the validation loss, and the
	// curves are validation curves.
	TestTokens int `json:"test_tokens,omitempty"`
	// Gamma is MethodPSClip's threshold and how it was chosen.
	Gamma *GammaChoice `json:"ps_clip_gamma,omitempty"`
	Runs  []StudyRun   `json:"runs"`
	// Cells are the main grid's (K = Base.Accum) and, with Ks, the K
	// sweep's, one per setting, K and method.
	Cells []Cell `json:"cells"`
}

// GammaChoice is the choice of MethodPSClip's constant threshold: the
// final validation loss of every γ of the grid at each selection seed, and
// the γ of the lowest mean.
type GammaChoice struct {
	At      string    `json:"at,omitempty"`    // with two or more values in Grid
	Seeds   []uint64  `json:"seeds,omitempty"` // likewise
	Grid    []float64 `json:"grid"`
	ValLoss [][]Float `json:"final_val_loss"` // [γ][seed]
	Mean    []Float   `json:"final_val_loss_mean"`
	Chosen  float64   `json:"chosen"`
}

// StudyRun is what one run of the study produced.
type StudyRun struct {
	Setting         Corruption  `json:"setting"`
	K               int         `json:"k"`
	Method          Method      `json:"method"`
	Seed            uint64      `json:"seed"`
	FinalValLoss    Float       `json:"final_val_loss"`
	FinalTestLoss   *Float      `json:"final_test_loss,omitempty"` // with a test split
	Curve           []EvalPoint `json:"curve"`
	Seconds         float64     `json:"train_time_s"`
	ClippedFraction float64     `json:"clipped_fraction"`
	Detection       *Detection  `json:"detection,omitempty"`
}

// Cell is one setting, K and method over the seeds: the per-seed final
// validation losses in the order of Seeds, their mean and sd, the mean
// wall time per run (evaluations included) and clipped share, clipping's
// mean detection precision and recall, and Paired, the paired comparison
// with global clipping at the same setting and K (method minus global:
// negative is a lower loss than global's), absent for global; with a test
// split, Test holds the same of the final test loss.
type Cell struct {
	Setting      Corruption    `json:"setting"`
	SettingName  string        `json:"setting_name"`
	K            int           `json:"k"`
	MicroBatch   int           `json:"micro_batch"`
	Method       Method        `json:"method"`
	Seeds        []uint64      `json:"seeds"`
	FinalValLoss []Float       `json:"final_val_loss"`
	Mean         Float         `json:"final_val_loss_mean"`
	SD           Float         `json:"final_val_loss_sd"`
	Seconds      Float         `json:"train_time_s_mean"`
	Clipped      Float         `json:"clipped_fraction_mean"`
	Precision    Float         `json:"detection_precision_mean"`
	Recall       Float         `json:"detection_recall_mean"`
	CorruptShare Float         `json:"detection_corrupt_share"`
	Paired       *stats.Paired `json:"paired,omitempty"`
	Test         *CellTest     `json:"test,omitempty"`
}

// CellTest is a cell's final test loss (StudyResults.TestTokens): per
// seed in the order of Seeds, their mean and sd, and the paired
// comparison with global clipping's, absent for global.
type CellTest struct {
	FinalTestLoss []Float       `json:"final_test_loss"`
	Mean          Float         `json:"final_test_loss_mean"`
	SD            Float         `json:"final_test_loss_sd"`
	Paired        *stats.Paired `json:"paired,omitempty"`
}

// reported is the cell's loss the tables report: the test loss with a
// test split, the validation loss otherwise.
func (c *Cell) reported() (perSeed []Float, mean, sd Float, paired *stats.Paired) {
	if t := c.Test; t != nil {
		return t.FinalTestLoss, t.Mean, t.SD, t.Paired
	}
	return c.FinalValLoss, c.Mean, c.SD, c.Paired
}

// RunCorruptionStudy trains every run of s on corpus, each in its own
// directory under o.Out/runs (the γ choice's under runs/gamma), and
// writes results.json (with its provenance), the tables and the figures
// to o.Out. The directory is held, resumed and restarted as
// RunExperiment's is; a run that both parts of the study have (the sweep's
// K = Base.Accum at a setting and method of the main grid) trains once.
func RunCorruptionStudy(ctx context.Context, s CorruptionStudy, corpus *text.Corpus, o run.Options) (*StudyResults, error) {
	x, err := run.OpenExperiment(o, s, s.Check)
	if err != nil {
		return nil, err
	}
	defer x.Close()
	res := &StudyResults{Study: s, Corpus: corpus.Name, TestTokens: len(corpus.Test)}
	var runs []provenance.Record // every run's, the γ choice's too
	train := func(c Config, label string, path ...string) (*Summary, error) {
		c.VocabSize, _ = modelVocab(c, corpus) // as New resolves it: a finished run's result records it so
		sum, err := run.Train[Summary](ctx, x.RunOptions(label, path...), c, c.identity(corpus), func(ro RunOptions) (*Run, error) { return New(c, corpus, ro) })
		if err == nil {
			runs = append(runs, sum.Provenance)
		}
		return sum, err
	}
	gamma := s.Base.Clip
	if slices.Contains(s.Methods, MethodPSClip) {
		if res.Gamma, err = s.chooseGamma(train); err != nil {
			return nil, err
		}
		gamma = res.Gamma.Chosen
	}
	add := func(at Corruption, k int, m Method, seed uint64) error {
		c := s.config(at, k, m, seed, gamma)
		name := slug(at)
		sum, err := train(c, fmt.Sprintf("%s K=%d %s seed=%d", at.CorruptionName(), k, m, seed), name, fmt.Sprintf("K=%d", k), string(m), fmt.Sprintf("seed=%d", seed))
		if err != nil {
			return err
		}
		res.Runs = append(res.Runs, StudyRun{Setting: at, K: k, Method: m, Seed: seed, FinalValLoss: sum.FinalValLoss, FinalTestLoss: sum.FinalTestLoss,
			Curve: sum.Curve, Seconds: sum.Seconds, ClippedFraction: sum.ClippedFraction, Detection: sum.Detection})
		return nil
	}
	for _, seed := range s.Seeds {
		for _, at := range s.Settings {
			for _, m := range s.Methods {
				if err := add(at, s.Base.Accum, m, seed); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, seed := range s.Seeds {
		for _, k := range s.Ks {
			for _, m := range s.KMethods {
				if k != s.Base.Accum || !slices.Contains(s.Settings, s.KAt) || !slices.Contains(s.Methods, m) {
					if err := add(s.KAt, k, m, seed); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	if res.Cells, err = s.cells(res.Runs); err != nil {
		return nil, err
	}
	res.Provenance = x.Provenance(runs...)
	if err := x.Finish(res, map[string]string{StudyTableMD: res.Tables()}); err != nil {
		return nil, err
	}
	return res, res.studyFigures(o.Out)
}

// chooseGamma trains PS-Clip at GammaAt with every γ of the grid on the
// selection seeds and returns the choice, made on the final validation
// loss alone: a held-out test split takes no part in it.
func (s *CorruptionStudy) chooseGamma(train func(Config, string, ...string) (*Summary, error)) (*GammaChoice, error) {
	g := &GammaChoice{Grid: s.GammaGrid, Chosen: s.GammaGrid[0]}
	if len(s.GammaGrid) == 1 {
		return g, nil
	}
	g.At, g.Seeds = s.GammaAt.CorruptionName(), s.GammaSeeds
	best := math.Inf(1)
	for _, gamma := range s.GammaGrid {
		var losses []float64
		var row []Float
		for _, seed := range s.GammaSeeds {
			c := s.config(s.GammaAt, s.Base.Accum, MethodPSClip, seed, gamma)
			gs := strconv.FormatFloat(gamma, 'g', -1, 64)
			sum, err := train(c, fmt.Sprintf("γ choice %s γ=%s seed=%d", s.GammaAt.CorruptionName(), gs, seed),
				GammaRunsPath, slug(s.GammaAt), "gamma="+gs, fmt.Sprintf("seed=%d", seed))
			if err != nil {
				return nil, err
			}
			losses = append(losses, float64(sum.FinalValLoss))
			row = append(row, sum.FinalValLoss)
		}
		mean, _ := stats.MeanSD(losses)
		g.ValLoss, g.Mean = append(g.ValLoss, row), append(g.Mean, mean)
		if float64(mean) < best {
			best, g.Chosen = float64(mean), gamma
		}
	}
	return g, nil
}

// slug names a corruption setting in run directories.
func slug(c Corruption) string { return strings.ReplaceAll(c.CorruptionName(), " ", "-") }

// cells groups runs by setting, K and method, in order of appearance, and
// pairs each with global clipping's cell of the same setting and K.
func (s *CorruptionStudy) cells(runs []StudyRun) ([]Cell, error) {
	type key struct {
		at Corruption
		k  int
		m  Method
	}
	var order []key
	by := map[key]map[uint64]StudyRun{}
	for _, r := range runs {
		k := key{r.Setting, r.K, r.Method}
		if by[k] == nil {
			by[k] = map[uint64]StudyRun{}
			order = append(order, k)
		}
		by[k][r.Seed] = r
	}
	losses := func(k key) []float64 {
		var l []float64
		for _, seed := range s.Seeds {
			l = append(l, float64(by[k][seed].FinalValLoss))
		}
		return l
	}
	// testLosses are the final test losses, nil if a run has none.
	testLosses := func(k key) []float64 {
		var l []float64
		for _, seed := range s.Seeds {
			t := by[k][seed].FinalTestLoss
			if t == nil {
				return nil
			}
			l = append(l, float64(*t))
		}
		return l
	}
	var cells []Cell
	for _, k := range order {
		c := Cell{Setting: k.at, SettingName: k.at.CorruptionName(), K: k.k, MicroBatch: s.stepSeqs() / k.k, Method: k.m, Seeds: s.Seeds}
		var secs, clipped, prec, rec, share []float64
		for _, seed := range s.Seeds {
			r := by[k][seed]
			c.FinalValLoss = append(c.FinalValLoss, r.FinalValLoss)
			secs, clipped = append(secs, r.Seconds), append(clipped, r.ClippedFraction)
			if d := r.Detection; d != nil {
				prec, rec, share = append(prec, float64(d.Precision)), append(rec, float64(d.Recall)), append(share, float64(d.CorruptShare))
			}
		}
		c.Mean, c.SD = stats.MeanSD(losses(k))
		c.Seconds, _ = stats.MeanSD(secs)
		c.Clipped, _ = stats.MeanSD(clipped)
		c.Precision, _ = stats.MeanSD(finiteOnly(prec))
		c.Recall, _ = stats.MeanSD(finiteOnly(rec))
		c.CorruptShare, _ = stats.MeanSD(share)
		ref := key{k.at, k.k, MethodGlobal}
		if k.m != MethodGlobal {
			p, err := stats.Pair(losses(k), losses(ref))
			if err != nil {
				return nil, err
			}
			c.Paired = &p
		}
		if tl := testLosses(k); tl != nil {
			t := &CellTest{}
			for _, l := range tl {
				t.FinalTestLoss = append(t.FinalTestLoss, Float(l))
			}
			t.Mean, t.SD = stats.MeanSD(tl)
			if k.m != MethodGlobal {
				p, err := stats.Pair(tl, testLosses(ref))
				if err != nil {
					return nil, err
				}
				t.Paired = &p
			}
			c.Test = t
		}
		cells = append(cells, c)
	}
	return cells, nil
}

// finiteOnly returns x without its NaNs (a run that clipped nothing has
// no precision).
func finiteOnly(x []float64) []float64 {
	return slices.DeleteFunc(slices.Clone(x), math.IsNaN)
}

// studyFigures saves the validation-loss curves (one panel per setting,
// K = Base.Accum), their paired differences from global clipping and,
// with a K sweep, the paired difference from global clipping over K.
func (r *StudyResults) studyFigures(dir string) error {
	s := &r.Study
	var curves, deltas []plotting.Panel
	for _, at := range s.Settings {
		p := plotting.Panel{Title: at.CorruptionName(), XLabel: "step", YLabel: "clean validation loss"}
		d := plotting.Panel{Title: at.CorruptionName(), XLabel: "step", YLabel: "Δ validation loss vs global"}
		ref := r.meanCurve(at, s.Base.Accum, MethodGlobal)
		for _, m := range s.Methods {
			c := r.meanCurve(at, s.Base.Accum, m)
			p.Series = append(p.Series, c)
			if m != MethodGlobal && slices.Equal(c.X, ref.X) {
				diff := plotting.Series{Name: c.Name, X: c.X}
				for i, y := range c.Y {
					diff.Y = append(diff.Y, y-ref.Y[i])
				}
				d.Series = append(d.Series, diff)
			}
		}
		curves, deltas = append(curves, p), append(deltas, d)
	}
	figs := map[string][]plotting.Panel{StudyCurves: curves, StudyDeltas: deltas}
	if len(s.Ks) > 0 {
		p := plotting.Panel{Title: s.KAt.CorruptionName() + ", paired with global", XLabel: "micro-batches K", YLabel: "Δ final " + r.lossName() + " loss (95 % CI)"}
		for _, m := range s.KMethods {
			if m == MethodGlobal {
				continue
			}
			var mean, lo, hi plotting.Series
			mean.Name, lo.Name, hi.Name = string(m), string(m)+" ci95 low", string(m)+" ci95 high"
			for _, k := range s.Ks {
				i := slices.IndexFunc(r.Cells, func(c Cell) bool { return c.Setting == s.KAt && c.K == k && c.Method == m })
				if i < 0 {
					continue
				}
				_, _, _, p := r.Cells[i].reported()
				if p == nil {
					continue
				}
				for _, sr := range []*plotting.Series{&mean, &lo, &hi} {
					sr.X = append(sr.X, float64(k))
				}
				mean.Y, lo.Y, hi.Y = append(mean.Y, float64(p.Mean)), append(lo.Y, float64(p.CI95[0])), append(hi.Y, float64(p.CI95[1]))
			}
			p.Series = append(p.Series, mean, lo, hi)
		}
		figs[StudyKFigure] = []plotting.Panel{p}
	}
	for name, panels := range figs {
		for _, ext := range []string{".png", ".svg"} {
			if err := plotting.Save(filepath.Join(dir, name+ext), panels); err != nil {
				return err
			}
		}
	}
	return nil
}

// meanCurve is method m's validation loss at setting at and K, averaged
// over seeds at every evaluation step the runs share.
func (r *StudyResults) meanCurve(at Corruption, k int, m Method) plotting.Series {
	sum, n := map[int]float64{}, map[int]int{}
	for _, run := range r.Runs {
		if run.Setting == at && run.K == k && run.Method == m {
			for _, pt := range run.Curve {
				sum[pt.Step] += float64(pt.ValLoss)
				n[pt.Step]++
			}
		}
	}
	s := plotting.Series{Name: string(m)}
	for step := range n {
		s.X = append(s.X, float64(step))
	}
	slices.Sort(s.X)
	for _, x := range s.X {
		s.Y = append(s.Y, sum[int(x)]/float64(n[int(x)]))
	}
	return s
}

// lossName names the loss the tables report: "test" with a held-out test
// split, "validation" otherwise.
func (r *StudyResults) lossName() string {
	if r.TestTokens > 0 {
		return "test"
	}
	return "validation"
}

// lossColumn is the tables' column of the reported loss.
func (r *StudyResults) lossColumn() string {
	if r.TestTokens > 0 {
		return "final test loss (mean ± sd)"
	}
	return "final val loss (mean ± sd)"
}

// Tables are the study's tables as markdown, from its results alone: the
// γ choice, the main grid and the K sweep. Δ is the paired difference in
// the final reported loss (test with a test split, validation otherwise)
// from global clipping (method − global, mean [95 % t-interval] over
// seeds; negative: lower loss than global), with the seeds on which the
// method was better (lower), worse and tied. The γ choice is on the
// validation loss either way.
func (r *StudyResults) Tables() string {
	var b strings.Builder
	s := &r.Study
	if g := r.Gamma; g != nil && len(g.Grid) > 1 {
		fmt.Fprintf(&b, "PS-Clip's constant γ, chosen at %s on seeds %v (final validation loss):\n\n| γ | per seed | mean |\n|---|---|---|\n", g.At, g.Seeds)
		for i, gamma := range g.Grid {
			var per []string
			for _, l := range g.ValLoss[i] {
				per = append(per, fmt.Sprintf("%.4f", float64(l)))
			}
			mark := ""
			if gamma == g.Chosen {
				mark = " (chosen)"
			}
			fmt.Fprintf(&b, "| %g%s | %s | %.4f |\n", gamma, mark, strings.Join(per, ", "), float64(g.Mean[i]))
		}
		b.WriteString("\n")
	}
	held := ""
	if r.TestTokens > 0 {
		held = fmt.Sprintf(" on the held-out test split (the last %d tokens of the text, which no run trained on and no choice read)", r.TestTokens)
	}
	fmt.Fprintf(&b, "Final clean %s loss%s, K = %d micro-batches of %d sequences, %d seeds; Δ = method − global, paired, mean [95 %% CI]; seeds better/worse/tied than global:\n\n",
		r.lossName(), held, s.Base.Accum, s.Base.MicroBatch, len(s.Seeds))
	header := "| setting | method | " + r.lossColumn() + " | Δ vs global [95 % CI] | better/worse/tied | time per run, s | clipped | detection precision (random) / recall |\n"
	b.WriteString(header)
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, c := range r.Cells {
		if c.K == s.Base.Accum && slices.Contains(s.Settings, c.Setting) && slices.Contains(s.Methods, c.Method) {
			b.WriteString(cellRow(c.SettingName, c, r.Gamma))
		}
	}
	if len(s.Ks) > 0 {
		fmt.Fprintf(&b, "\nK sweep at %s: the step's %d sequences in K micro-batches; Δ = method − global at the same K:\n\n", s.KAt.CorruptionName(), s.stepSeqs())
		b.WriteString(strings.Replace(header, "setting", "K × M", 1))
		b.WriteString("|---|---|---|---|---|---|---|---|\n")
		for _, k := range s.Ks {
			for _, c := range r.Cells {
				if c.K == k && c.Setting == s.KAt && slices.Contains(s.KMethods, c.Method) {
					b.WriteString(cellRow(fmt.Sprintf("%d × %d", k, c.MicroBatch), c, r.Gamma))
				}
			}
		}
		b.WriteString(r.acrossK())
	}
	return b.String()
}

// acrossK is the K sweep's table of each method against itself at
// K = Base.Accum, paired by seed: a seed trains on the same sequences at
// every K, so global clipping differs across K by float32 summation order
// alone, and MB-Clip by its split. It is empty when no method of the sweep
// has runs at Base.Accum.
func (r *StudyResults) acrossK() string {
	s := &r.Study
	var rows []string
	for _, m := range s.KMethods {
		i := slices.IndexFunc(r.Cells, func(c Cell) bool { return c.Setting == s.KAt && c.K == s.Base.Accum && c.Method == m })
		if i < 0 {
			continue
		}
		ref := r.Cells[i]
		for _, k := range s.Ks {
			j := slices.IndexFunc(r.Cells, func(c Cell) bool { return c.Setting == s.KAt && c.K == k && c.Method == m })
			if k == s.Base.Accum || j < 0 {
				continue
			}
			x, _, _, _ := r.Cells[j].reported()
			y, _, _, _ := ref.reported()
			p, err := stats.Pair(floats(x), floats(y))
			if err != nil {
				continue
			}
			rows = append(rows, fmt.Sprintf("| %d × %d | %s | %s | %d/%d/%d |\n", k, r.Cells[j].MicroBatch, MethodLabel(m, r.Gamma), p.Format(4), p.Negative, p.Positive, p.Zero))
		}
	}
	if rows == nil {
		return ""
	}
	in := ""
	if r.TestTokens > 0 {
		in = " in final test loss"
	}
	return fmt.Sprintf("\nEach method across K: Δ = method at K − the same method at K = %d%s, paired by seed (the same sequences, corrupted alike, at every K); seeds lower/higher/tied:\n\n", s.Base.Accum, in) +
		"| K × M | method | Δ vs K = " + strconv.Itoa(s.Base.Accum) + " [95 % CI] | lower/higher/tied |\n|---|---|---|---|\n" + strings.Join(rows, "")
}

// floats converts per-seed losses for stats.Pair.
func floats(x []Float) []float64 {
	f := make([]float64, len(x))
	for i, v := range x {
		f[i] = float64(v)
	}
	return f
}

// MethodLabel names method m in tables, with PS-Clip's chosen γ.
func MethodLabel(m Method, g *GammaChoice) string {
	switch m {
	case MethodGlobal:
		return "global (γ on ḡ)"
	case MethodMBClip:
		return "MB-Clip (γ on each g_j/K, paper)"
	case MethodMBClipMean:
		return "MB-Clip (γ on each g_j, mean)"
	case MethodPSClip:
		if g != nil {
			return fmt.Sprintf("PS-Clip (γ = %g on each g_i)", g.Chosen)
		}
		return "PS-Clip"
	case MethodPSAuto:
		return "ps-clip-auto"
	}
	return "no clipping"
}

// cellRow is one table row, of the cell's reported loss.
func cellRow(first string, c Cell, g *GammaChoice) string {
	_, mean, sd, paired := c.reported()
	delta, signs := "reference", "—"
	if p := paired; p != nil {
		delta = p.Format(4)
		signs = fmt.Sprintf("%d/%d/%d", p.Negative, p.Positive, p.Zero)
	}
	det := "—"
	if !math.IsNaN(float64(c.CorruptShare)) {
		det = fmt.Sprintf("%s (%.3f) / %s", fmtFrac(c.Precision), float64(c.CorruptShare), fmtFrac(c.Recall))
	}
	clipped := "—"
	if c.Method != MethodNone {
		clipped = fmt.Sprintf("%.1f %%", 100*float64(c.Clipped))
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s | %.1f | %s | %s |\n", first, MethodLabel(c.Method, g), pm(mean, sd, 4), delta, signs,
		float64(c.Seconds), clipped, det)
}

func fmtFrac(f Float) string {
	if math.IsNaN(float64(f)) {
		return "—"
	}
	return fmt.Sprintf("%.3f", float64(f))
}
