package jsonkeys

import "testing"

func TestRewrite(t *testing.T) {
	rename := map[string]string{"estimator": "ps_estimator"}
	b, err := Rewrite([]byte(`{"estimator":"ps-clip-auto","alpha":0,"beta":2,"clip":1}`), rename, "alpha", "beta")
	if want := `{"ps_estimator":"ps-clip-auto","beta":2,"clip":1}`; err != nil || string(b) != want {
		t.Errorf("Rewrite = %s, %v; want %s", b, err, want)
	}
	back, err := Rewrite(b, Invert(rename))
	if want := `{"estimator":"ps-clip-auto","beta":2,"clip":1}`; err != nil || string(back) != want {
		t.Errorf("inverse = %s, %v; want %s", back, err, want)
	}
	if _, err := Rewrite([]byte(`[1]`), rename); err == nil {
		t.Error("a JSON array was rewritten")
	}
}
