package tensor

import "testing"

func TestShapes(t *testing.T) {
	x := New(2, 3, 4)
	if x.Len() != 24 || x.Rows() != 6 || x.Dim(-1) != 4 || x.Dim(0) != 2 {
		t.Fatalf("bad geometry: len %d rows %d", x.Len(), x.Rows())
	}
	y := x.Reshape(6, 4)
	y.Data[5] = 7
	if x.Data[5] != 7 {
		t.Fatal("Reshape must share data")
	}
	c := x.Clone()
	c.Data[5] = 1
	if x.Data[5] != 7 {
		t.Fatal("Clone must copy data")
	}
	if !x.SameShape(New(2, 3, 4)) || x.SameShape(y) {
		t.Fatal("SameShape wrong")
	}
	if got := x.String(); got != "Tensor[2×3×4]" {
		t.Fatalf("String = %q", got)
	}
}

func TestFromPanicsOnMismatch(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("From with a wrong length must panic")
		}
	}()
	From(make([]float32, 5), 2, 3)
}
