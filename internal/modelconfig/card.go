package modelconfig

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// maxCard bounds how much of a model card is read: its YAML front matter
// comes first.
const maxCard = 64 << 10

// BaseModel is the base_model of ref's model card (the README.md beside
// its config.json: a model directory's, or a Hugging Face cache
// snapshot's), as the Hub writes it in the card's YAML front matter:
// `base_model: Qwen/Qwen3-4B`, or a list whose first item is taken. ""
// when there is no card, no front matter or no base_model. An
// mlx-community conversion names the model it was made from there (the
// id VeloBenchmark's emitter stamps as model.id, seed 004).
func BaseModel(ref, hubCache string) string {
	return ReadCard(ref, hubCache).BaseModel
}

// Card is what ReadCard found of a model's card, so that a caller can say
// why there is no base_model.
type Card struct {
	// Config is the config.json the card is looked for beside ("" when
	// ref's config.json is not found).
	Config string
	// README is the card's path, when there is one.
	README string
	// BaseModel is its base_model ("" when none).
	BaseModel string
}

// ReadCard reads ref's model card as BaseModel does. mlx_lm's own
// download (mlx_lm/utils.py, _download's allow_patterns: *.json,
// model*.safetensors, *.py, tokenizer.model, *.tiktoken, tiktoken.model,
// *.txt, *.jsonl, *.jinja) never fetches README.md, so a model that only
// mlx_lm fetched has no card: Config set, README "".
func ReadCard(ref, hubCache string) Card {
	path, err := Locate(ref, hubCache)
	if err != nil {
		return Card{}
	}
	c := Card{Config: path}
	readme := filepath.Join(filepath.Dir(path), "README.md")
	f, err := os.Open(readme)
	if err != nil {
		return c
	}
	defer f.Close()
	c.README = readme
	c.BaseModel = baseModelOf(io.LimitReader(f, maxCard))
	return c
}

// baseModelOf reads base_model from a card's front matter.
func baseModelOf(r io.Reader) string {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxCard)
	if !sc.Scan() || strings.TrimSpace(sc.Text()) != "---" {
		return ""
	}
	inList := false
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t\r")
		if line == "---" || line == "..." {
			return ""
		}
		if inList {
			item, ok := strings.CutPrefix(strings.TrimSpace(line), "- ")
			if ok {
				return unquote(item)
			}
			return "" // base_model: followed by no list
		}
		v, ok := strings.CutPrefix(line, "base_model:")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch {
		case v == "":
			inList = true
		case strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]"):
			first, _, _ := strings.Cut(strings.Trim(v, "[]"), ",")
			return unquote(first)
		default:
			return unquote(v)
		}
	}
	return ""
}

// unquote is a YAML scalar without its quotes and trailing comment.
func unquote(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, " #"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}
