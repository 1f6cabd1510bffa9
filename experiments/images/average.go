package images

import (
	"math"

	"github.com/psclip/psclip/setting"
)

// Tail averaging (Config.AverageSteps): the run keeps the running sum of
// its weights after each of its last AverageSteps steps and, at the end,
// also evaluates their mean on the test set (Summary.AvgTestAcc). The mean
// is a function of the weights the steps produce, so under dp-sgd it costs
// no privacy: DP-SGD's accounting covers every step's weights. The sum is
// part of the trainer's state, so a resumed run averages what an
// uninterrupted one does.

// checkAverage refuses a window longer than the run's steps.
func (c *Config) checkAverage(steps int) error {
	if err := setting.NonNegative("AverageSteps", c.AverageSteps); err != nil {
		return err
	}
	if c.AverageSteps > steps {
		return setting.Errorf("AverageSteps", c.AverageSteps, "at most the run's %d steps", steps)
	}
	return nil
}

// averageFrom is the number of steps done after which the weights enter
// the mean: the window is steps averageFrom+1 … TotalSteps.
func (r *Run) averageFrom() int { return r.TotalSteps() - r.cfg.AverageSteps }

// startAverage makes a resumed run's sum that of the window it runs to:
// a run resumed with more epochs has a later window, whose sum starts
// afresh.
func (r *Run) startAverage() {
	if want := max(0, r.h.Done()-r.averageFrom()); r.st.AvgSteps != want {
		r.st.AvgSum, r.st.AvgSteps = nil, 0
	}
}

// addAverage adds the weights after step done (1-based) to the sum if
// the step is in the window.
func (r *Run) addAverage(done int) {
	if r.cfg.AverageSteps == 0 || done <= r.averageFrom() {
		return
	}
	if r.st.AvgSum == nil {
		for _, p := range r.model.Params() {
			r.st.AvgSum = append(r.st.AvgSum, make([]float64, len(p.Value.Data))...)
		}
	}
	i := 0
	for _, p := range r.model.Params() {
		for _, v := range p.Value.Data {
			r.st.AvgSum[i] += float64(v)
			i++
		}
	}
	r.st.AvgSteps++
}

// evaluateAverage evaluates the mean of the window's weights on the test
// set, and puts the last weights back; NaN without a window.
func (r *Run) evaluateAverage() (acc, loss float64) {
	if r.st.AvgSteps == 0 {
		return math.NaN(), math.NaN()
	}
	var last [][]float32
	i := 0
	for _, p := range r.model.Params() {
		last = append(last, append([]float32(nil), p.Value.Data...))
		for j := range p.Value.Data {
			p.Value.Data[j] = float32(r.st.AvgSum[i] / float64(r.st.AvgSteps))
			i++
		}
	}
	acc, loss = r.evaluate(r.data.Test)
	for k, p := range r.model.Params() {
		copy(p.Value.Data, last[k])
	}
	return acc, loss
}
