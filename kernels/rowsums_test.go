package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRowStats checks RowStats, on whichever implementation runs, against
// rowStats row by row, bit for bit (so that the rows' grouping does not
// matter), and against a float64 computation summed backwards.
func TestRowStats(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, d := range []int{1, 7, 128, 300} {
		for _, rows := range []int{1, 5, 16, 23, 40} {
			x := randSlice(r, rows*d+3)
			for i := range x {
				x[i] = 3 + 2*x[i] // a mean away from 0
			}
			mean, rstd := make([]float64, rows), make([]float64, rows)
			RowStats(x, d, 1e-5, mean, rstd)
			for i := range rows {
				row := x[i*d : (i+1)*d]
				if m, s := rowStats(row, 1e-5); mean[i] != m || rstd[i] != s {
					t.Fatalf("d %d, %d rows: row %d: %v, %v, want %v, %v (rowStats)", d, rows, i, mean[i], rstd[i], m, s)
				}
				var sum, ss float64
				for j := d - 1; j >= 0; j-- {
					sum += float64(row[j])
				}
				m := sum / float64(d)
				for j := d - 1; j >= 0; j-- {
					ss += (float64(row[j]) - m) * (float64(row[j]) - m)
				}
				s := 1 / math.Sqrt(ss/float64(d)+1e-5)
				if math.Abs(mean[i]-m) > 1e-13*(1+math.Abs(m)) || math.Abs(rstd[i]-s) > 1e-12*s {
					t.Fatalf("d %d, %d rows: row %d: %v, %v, want about %v, %v", d, rows, i, mean[i], rstd[i], m, s)
				}
			}
		}
	}
}

// TestGradSums checks GradSums as TestRowStats does RowStats, against
// gradSums row by row and within float32 rounding of a float64 sum.
func TestGradSums(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	for _, d := range []int{1, 7, 128, 300} {
		for _, rows := range []int{1, 5, 16, 23, 40} {
			dy, h, w := randSlice(r, rows*d+3), randSlice(r, rows*d+5), randSlice(r, d)
			sg, sgx := make([]float32, rows), make([]float32, rows)
			GradSums(dy, h, w, sg, sgx)
			for i := range rows {
				g, hr := dy[i*d:(i+1)*d], h[i*d:(i+1)*d]
				if a, b := gradSums(g, hr, w); sg[i] != a || sgx[i] != b {
					t.Fatalf("d %d, %d rows: row %d: %v, %v, want %v, %v (gradSums)", d, rows, i, sg[i], sgx[i], a, b)
				}
				var a, b, abs float64
				for j := range d {
					e := float64(g[j]) * float64(w[j])
					a += e
					b += e * float64(hr[j])
					abs += math.Abs(e) * (1 + math.Abs(float64(hr[j])))
				}
				tol := 2 * float64(d) * 0x1p-24 * abs / float64(d)
				if math.Abs(float64(sg[i])-a/float64(d)) > tol || math.Abs(float64(sgx[i])-b/float64(d)) > tol {
					t.Fatalf("d %d, %d rows: row %d: %v, %v, want about %v, %v", d, rows, i, sg[i], sgx[i], a/float64(d), b/float64(d))
				}
			}
		}
	}
}

// BenchmarkRowSums times RowStats and GradSums on one GPT layer norm
// (batch 12, T 64, 128 features).
func BenchmarkRowSums(b *testing.B) {
	r := rand.New(rand.NewPCG(45, 46))
	const rows, d = 768, 128
	x, h, w := randSlice(r, rows*d), randSlice(r, rows*d), randSlice(r, d)
	mean, rstd := make([]float64, rows), make([]float64, rows)
	sg, sgx := make([]float32, rows), make([]float32, rows)
	b.Run("RowStats", func(b *testing.B) {
		for b.Loop() {
			RowStats(x, d, 1e-5, mean, rstd)
		}
	})
	b.Run("GradSums", func(b *testing.B) {
		for b.Loop() {
			GradSums(x, h, w, sg, sgx)
		}
	})
}
