package nn

// transposeBlock is the side of the square blocks transposeAdd copies: a
// block's rows of src and of dst are each a cache line or less.
const transposeBlock = 16

// transposeAdd sets dst [rows,cols] to srcᵀ (src is [cols,rows]) plus b[j]
// in column j (none for nil b), a block at a time, blocks of rows shared out
// among the goroutines. Each element is one copy and at most one addition,
// so the result does not depend on the split.
func transposeAdd(dst, src []float32, rows, cols int, b []float32) {
	blocks := (rows + transposeBlock - 1) / transposeBlock
	spans(blocks, max(1, passSpan/(transposeBlock*cols)), func(lo, hi int) {
		for r0 := lo * transposeBlock; r0 < min(hi*transposeBlock, rows); r0 += transposeBlock {
			r1 := min(r0+transposeBlock, rows)
			for j0 := 0; j0 < cols; j0 += transposeBlock {
				j1 := min(j0+transposeBlock, cols)
				for r := r0; r < r1; r++ {
					d := dst[r*cols+j0 : r*cols+j1]
					for j := range d {
						d[j] = src[(j0+j)*rows+r]
					}
					if b != nil {
						for j := range d {
							d[j] += b[j0+j]
						}
					}
				}
			}
		}
	})
}
