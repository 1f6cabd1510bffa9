package readme

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

const root = "../.."

func TestLookup(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(`{"rows":[{"p":1.2,"method":"sgd","avg":0.5,"m":{"k":"a"}},
		{"p":1.5,"method":"sgd","avg":0.25,"m":{"k":"b"}},{"p":1.2,"method":"ps","avg":0.125,"m":{"k":"a"}}],
		"x":{"y":[10,20,30]},"ok":true}`), &doc); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want []any
		err  bool
	}{
		{"x.y[1]", []any{20.0}, false},
		{"x.y[*]", []any{10.0, 20.0, 30.0}, false},
		{"rows[p=1.2,method=ps].avg", []any{0.125}, false},
		{"rows[p=1.20].avg", []any{0.5, 0.125}, false},
		{"rows[m.k=b].p", []any{1.5}, false},
		{"rows[method=none].avg", nil, false},
		{"rows[*].m.k", []any{"a", "b", "a"}, false},
		{"ok", []any{true}, false},
		{"x.y[3]", nil, true},
		{"x.z", nil, true},
		{"rows.p", nil, true},
		{"x[0]", nil, true},
		{"rows[p]", nil, true},
		{"rows[p=1.2", nil, true},
	} {
		got, err := Lookup(doc, tc.path)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("Lookup(%q) = %v, %v; want %v, error %v", tc.path, got, err, tc.want, tc.err)
		}
	}
}

// TestRender renders a template against a file of its own: the numbers at
// the stated precision, the list functions, and an error for a path that
// matches more than one value. The paired column: differences 27, 9, 18,
// mean 18, sd 9, t(0.975, 2) = 4.3027 (R: qt(0.975, 2)), half-width
// 4.3027·9/√3 = 22.36.
func TestRender(t *testing.T) {
	dir := t.TempDir()
	// A marker in a fenced code block is an example, left as it is.
	fence := "```\n" + beginPrefix + "ok.md" + beginSuffix + "\nexample\n" + endLine + "\n```\n"
	files := map[string]string{
		"e.json":     `{"r":[{"m":"a","x":0.12345,"t":[3,1,2]},{"m":"b","x":2,"t":[4]},{"m":"c","x":0,"t":[1,0,3]}]}`,
		"ok.md":      `| a | {{printf "%.3f" (v "e.json" "r[m=a].x")}} | {{printf "%.2f×" (div (v "e.json" "r[m=b].x") (v "e.json" "r[m=a].x"))}} | {{median (all "e.json" "r[m=a].t[*]")}} | {{max (all "e.json" "r[*].t[*]")}} | {{(pair (scale 10 (all "e.json" "r[m=a].t[*]")) (all "e.json" "r[m=a].t[*]")).Format 1}} |` + "\n\n",
		"bad.md":     `{{v "e.json" "r[*].x"}}`,
		"diff.md":    `{{(pair (diff (all "e.json" "r[m=a].t[*]") (all "e.json" "r[m=c].t[*]")) (all "e.json" "r[m=c].t[*]")).Format 1}}`,
		"diffbad.md": `{{diff (all "e.json" "r[m=a].t[*]") (all "e.json" "r[m=b].t[*]")}}`,
		"page.md":    "text\n" + beginPrefix + "ok.md" + beginSuffix + "\nstale\n" + endLine + "\nmore\n" + fence,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Render(dir, "ok.md")
	if want := "| a | 0.123 | 16.20× | 2 | 4 | +18.0 [-4.4, +40.4] |\n"; err != nil || got != want {
		t.Errorf("Render = %q, %v; want %q", got, err, want)
	}
	if _, err := Render(dir, "bad.md"); err == nil || !strings.Contains(err.Error(), "matches 3 values") {
		t.Errorf("Render of an ambiguous path: %v", err)
	}
	// diff: a − c = 2, 1, −1, paired with c = 1, 0, 3: differences 1, 1,
	// −4, mean −0.67, sd 2.89, half-width 4.3027·2.89/√3 = 7.17
	// (R: t.test(c(1, 1, -4))); a list of 3 against one of 1 is an error.
	if got, err := Render(dir, "diff.md"); err != nil || got != "-0.7 [-7.8, +6.5]\n" {
		t.Errorf("Render(diff.md) = %q, %v; want %q", got, err, "-0.7 [-7.8, +6.5]\n")
	}
	if got, err := Render(dir, "diffbad.md"); err == nil || !strings.Contains(err.Error(), "diff of lists of 3 and 1 values") {
		t.Errorf("Render(diffbad.md) = %q, %v; want an error for lists of different lengths", got, err)
	}
	page, used, err := Regenerate(dir, "page.md")
	if want := "text\n" + beginPrefix + "ok.md" + beginSuffix + "\n| a | 0.123 | 16.20× | 2 | 4 | +18.0 [-4.4, +40.4] |\n" + endLine + "\nmore\n" + fence; err != nil || page != want || !slices.Equal(used, []string{"ok.md"}) {
		t.Errorf("Regenerate = %q, %v, %v; want %q", page, used, err, want)
	}
}

// TestTablesCurrent: every generated table of README.md and docs/*.md is
// what its template gives with today's evidence files, and README has its
// results and speed tables.
func TestTablesCurrent(t *testing.T) {
	pages, err := Pages(root)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, p := range pages {
		want, used, err := Regenerate(root, p)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, used...)
		got, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			g, w := strings.Split(string(got), "\n"), strings.Split(want, "\n")
			for i := range min(len(g), len(w)) {
				if g[i] != w[i] {
					t.Errorf("%s:%d is stale (run go generate ./internal/readme):\n got  %s\n want %s", p, i+1, g[i], w[i])
					break
				}
			}
			if len(g) != len(w) {
				t.Errorf("%s: %d lines, the templates give %d (run go generate ./internal/readme)", p, len(g), len(w))
			}
		}
	}
	for _, tbl := range []string{"docs/tables/results.md", "docs/tables/speed.md"} {
		if !slices.Contains(all, tbl) {
			t.Errorf("no page has the table %s", tbl)
		}
	}
}

// TestREADMEForUsers: README.md is at most 300 lines and names no commit
// hashes or issue numbers (what changed goes into CHANGELOG.md).
func TestREADMEForUsers(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if n := strings.Count(text, "\n"); n > 300 {
		t.Errorf("README.md has %d lines, more than 300", n)
	}
	hash := regexp.MustCompile(`\b[0-9a-f]{7,40}\b`)
	for _, h := range hash.FindAllString(text, -1) {
		if strings.ContainsAny(h, "abcdef") && strings.ContainsAny(h, "0123456789") {
			t.Errorf("README.md names %q, a commit hash", h)
		}
	}
	if m := regexp.MustCompile(`(?i)\bissues? #?\d+|(^|\s)#\d+\b`).FindAllString(text, -1); m != nil {
		t.Errorf("README.md names issues: %q", m)
	}
}

var (
	linkRE   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	linkText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// TestLinks: every relative link of the repository's Markdown files names
// a file that exists, and in README.md and docs/*.md every #anchor names a
// heading of its page.
func TestLinks(t *testing.T) {
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".md") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "docs/tables/") {
			return nil // templates: their links are checked where they are rendered
		}
		checkAnchors := rel == "README.md" || strings.HasPrefix(rel, "docs/") && !strings.HasPrefix(rel, "docs/tables/")
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range linkRE.FindAllStringSubmatch(stripCode(string(b)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			dest := path
			if file != "" {
				dest = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %s: no such file", rel, target)
					continue
				}
			}
			if anchor == "" || !checkAnchors || !strings.HasSuffix(dest, ".md") {
				continue
			}
			page, err := os.ReadFile(dest)
			if err != nil {
				return err
			}
			if !slices.Contains(anchors(string(page)), anchor) {
				t.Errorf("%s: link %s: no such heading", rel, target)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// stripCode removes fenced code blocks, whose brackets are no links.
func stripCode(s string) string {
	var out strings.Builder
	in := false
	for line := range strings.Lines(s) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
			continue
		}
		if !in {
			out.WriteString(line)
		}
	}
	return out.String()
}

// anchors are the anchors GitHub gives a page's headings: lower case,
// punctuation dropped, spaces as hyphens, "-1", "-2" for repeats.
func anchors(page string) []string {
	var out []string
	seen := map[string]int{}
	for line := range strings.Lines(stripCode(page)) {
		h := strings.TrimLeft(line, "#")
		if len(h) == len(line) || len(line)-len(h) > 6 || !strings.HasPrefix(h, " ") {
			continue
		}
		h = linkText.ReplaceAllString(h, "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out = append(out, a+"-"+strconv.Itoa(n))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}
