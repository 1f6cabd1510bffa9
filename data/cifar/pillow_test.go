package cifar

import (
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// pillowFixtures is testdata/pillow_ops.json.gz, written once by
// testdata/pillow_ops.py with Pillow.
type pillowFixtures struct {
	Pillow string `json:"pillow"`
	Images map[string]struct {
		C, H, W int
		Pix     string
	} `json:"images"`
	Cases []struct {
		Image     string  `json:"image"`
		Op        string  `json:"op"`
		Bin       int     `json:"bin"`
		Sign      int     `json:"sign"`
		Magnitude float64 `json:"magnitude"`
		Pix       string  `json:"pix"`
	} `json:"cases"`
}

// TestOpsMatchPillow checks every operation at every magnitude
// torchvision's AutoAugment uses (10 bins, both signs of the signed ops)
// against Pillow's own result, on grey and RGB images of three sizes: the
// fixtures apply each op to a PIL image as torchvision's _apply_op does
// (Image.transform with torchvision's inverse affine matrix and
// nearest-neighbour sampling, Image.rotate, ImageEnhance, ImageOps), with
// torch.linspace's float32 magnitudes. psclip follows torchvision on PIL
// images, the paper's pipeline, not its tensor kernels (which interpolate
// and round differently); the tolerance is zero: every byte must match,
// and every magnitude must equal Magnitude's bit for bit.
func TestOpsMatchPillow(t *testing.T) {
	f, err := os.Open("testdata/pillow_ops.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var fx pillowFixtures
	if err := json.NewDecoder(z).Decode(&fx); err != nil {
		t.Fatal(err)
	}
	images := map[string]Image{}
	for name, im := range fx.Images {
		pix, err := base64.StdEncoding.DecodeString(im.Pix)
		if err != nil || len(pix) != im.C*im.H*im.W {
			t.Fatalf("image %s: %d bytes, %v", name, len(pix), err)
		}
		images[name] = Image{im.C, im.H, im.W, pix}
	}
	seen := map[Op]int{}
	for _, c := range fx.Cases {
		op := Op(slices.Index(opNames[:], c.Op))
		src, ok := images[c.Image]
		if op >= numOps || !ok {
			t.Fatalf("case %+v: unknown op or image", c)
		}
		seen[op]++
		mag := 0.0
		if op != AutoContrast && op != Equalize && op != Invert {
			m, signed := Magnitude(op, c.Bin, src.W, src.H)
			if signed != (c.Sign != 0 && op != Posterize && op != Solarize) {
				t.Errorf("%v: signed %v", op, signed)
			}
			mag = float64(c.Sign) * m
		}
		if mag != c.Magnitude {
			t.Errorf("%s %v bin %d sign %d: magnitude %v, torchvision's %v", c.Image, op, c.Bin, c.Sign, mag, c.Magnitude)
		}
		want, err := base64.StdEncoding.DecodeString(c.Pix)
		if err != nil {
			t.Fatal(err)
		}
		got := apply(op, src, mag)
		if diff := countDiff(got.Pix, want); diff > 0 {
			t.Errorf("%s %v(%v) (bin %d): %d of %d bytes differ from Pillow's", c.Image, op, mag, c.Bin, diff, len(want))
		}
	}
	if len(seen) != NumOps {
		t.Errorf("fixtures cover %d operations, want all %d", len(seen), NumOps)
	}
	t.Logf("%d cases from Pillow %s", len(fx.Cases), fx.Pillow)
}

func countDiff(a, b []byte) int {
	if len(a) != len(b) {
		return max(len(a), len(b))
	}
	n := 0
	for i := range a {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}
