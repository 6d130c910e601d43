// Package modelconfig reads the facts of a model from its Hugging Face
// config.json: the proxy turns them into mlx_model_info and the context
// gauges, the KV-cache receiver into the bytes of a full-context sequence.
package modelconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Info is what config.json says about a model. Zero means "not given".
type Info struct {
	ModelType        string // model_type, e.g. qwen3
	Architecture     string // architectures[0], e.g. Qwen3ForCausalLM
	Dtype            string // torch_dtype or dtype, e.g. bfloat16
	Layers           int    // num_hidden_layers
	KVLayers         int    // layers that keep a KV cache (full attention)
	AttentionHeads   int    // num_attention_heads
	KVHeads          int    // num_key_value_heads (= attention heads when absent)
	HeadDim          int    // head_dim, else hidden_size / num_attention_heads
	HiddenSize       int    // hidden_size
	VocabSize        int    // vocab_size
	IntermediateSize int    // intermediate_size (the FFN width)
	MaxContext       int    // max_position_embeddings
	QuantBits        int    // quantization.bits (mlx) or quantization_config.bits
	QuantGroupSize   int    // quantization.group_size
	// Facts only some models have (the linear-attention layers of hybrid
	// models such as Qwen3.5, multi-token prediction, tied embeddings), by
	// the original's mlx_model_info attr names; absent keys are left out.
	Optional map[string]int
}

// The optional facts: mlx_model_info attr -> config.json key.
var optionalFacts = []struct{ Attr, Key string }{
	{"linear_key_heads", "linear_num_key_heads"},
	{"linear_value_heads", "linear_num_value_heads"},
	{"linear_key_head_dim", "linear_key_head_dim"},
	{"linear_value_head_dim", "linear_value_head_dim"},
	{"linear_conv_kernel_dim", "linear_conv_kernel_dim"},
	{"mtp_layers", "mtp_num_hidden_layers"},
	{"tie_word_embeddings", "tie_word_embeddings"},
}

// OptionalAttrs are the attr names of Info.Optional, in a fixed order.
func OptionalAttrs() []string {
	out := make([]string, len(optionalFacts))
	for i, f := range optionalFacts {
		out[i] = f.Attr
	}
	return out
}

// optional reads the optional facts from the text config, then the outer
// one: a number as it is, a boolean as 1 or 0.
func optional(configs ...map[string]json.RawMessage) map[string]int {
	out := map[string]int{}
	for _, f := range optionalFacts {
		for _, c := range configs {
			raw, ok := c[f.Key]
			if !ok {
				continue
			}
			var v any
			if json.Unmarshal(raw, &v) != nil {
				continue
			}
			switch x := v.(type) {
			case float64:
				out[f.Attr] = int(x)
			case bool:
				out[f.Attr] = 0
				if x {
					out[f.Attr] = 1
				}
			default:
				continue
			}
			break
		}
	}
	return out
}

// KVBytesPerToken is the KV cache one token takes: for every layer that
// keeps one, a key and a value of KV heads × head dim elements.
// bytesPerElement is the cache's element size: MLX keeps the cache in the
// activation dtype (2 bytes for float16 and bfloat16), not in the weights'
// quantized width.
func (i Info) KVBytesPerToken(bytesPerElement int) int64 {
	return int64(i.KVLayers) * 2 * int64(i.KVHeads) * int64(i.HeadDim) * int64(bytesPerElement)
}

// rawConfig is the subset of config.json read. Multimodal and some newer
// models keep the language model's fields under text_config.
type rawConfig struct {
	ModelType             string     `json:"model_type"`
	Architectures         []string   `json:"architectures"`
	TorchDtype            string     `json:"torch_dtype"`
	Dtype                 string     `json:"dtype"`
	NumHiddenLayers       int        `json:"num_hidden_layers"`
	NumAttentionHeads     int        `json:"num_attention_heads"`
	NumKeyValueHeads      int        `json:"num_key_value_heads"`
	HeadDim               int        `json:"head_dim"`
	HiddenSize            int        `json:"hidden_size"`
	VocabSize             int        `json:"vocab_size"`
	IntermediateSize      int        `json:"intermediate_size"`
	MaxPositionEmbeddings int        `json:"max_position_embeddings"`
	LayerTypes            []string   `json:"layer_types"`
	FullAttentionInterval int        `json:"full_attention_interval"`
	Quantization          *quant     `json:"quantization"`
	QuantizationConfig    *quant     `json:"quantization_config"`
	TextConfig            *rawConfig `json:"text_config"`
}

type quant struct {
	Bits      int `json:"bits"`
	GroupSize int `json:"group_size"`
}

// Parse reads config.json bytes.
func Parse(b []byte) (Info, error) {
	var rc rawConfig
	if err := json.Unmarshal(b, &rc); err != nil {
		return Info{}, fmt.Errorf("config.json: %w", err)
	}
	text := rc
	if rc.TextConfig != nil {
		text = *rc.TextConfig
		text.merge(rc)
	}
	info := Info{
		ModelType:        text.ModelType,
		Dtype:            first(text.TorchDtype, text.Dtype),
		Layers:           text.NumHiddenLayers,
		AttentionHeads:   text.NumAttentionHeads,
		KVHeads:          text.NumKeyValueHeads,
		HeadDim:          text.HeadDim,
		HiddenSize:       text.HiddenSize,
		VocabSize:        text.VocabSize,
		IntermediateSize: text.IntermediateSize,
		MaxContext:       text.MaxPositionEmbeddings,
	}
	if len(rc.Architectures) > 0 {
		info.Architecture = rc.Architectures[0]
	}
	if rc.ModelType != "" {
		info.ModelType = rc.ModelType
	}
	if info.KVHeads == 0 {
		info.KVHeads = info.AttentionHeads
	}
	if info.HeadDim == 0 && info.AttentionHeads > 0 {
		info.HeadDim = info.HiddenSize / info.AttentionHeads
	}
	info.KVLayers = kvLayers(text)
	if q := first2(rc.Quantization, rc.QuantizationConfig, text.Quantization, text.QuantizationConfig); q != nil {
		info.QuantBits, info.QuantGroupSize = q.Bits, q.GroupSize
	}
	var outer, inner map[string]json.RawMessage
	_ = json.Unmarshal(b, &outer)
	if raw, ok := outer["text_config"]; ok {
		_ = json.Unmarshal(raw, &inner)
	}
	info.Optional = optional(inner, outer)
	if info.Layers <= 0 || info.AttentionHeads <= 0 {
		return info, errors.New("config.json: num_hidden_layers and num_attention_heads are required")
	}
	return info, nil
}

// kvLayers counts the layers that keep a KV cache. Hybrid models (linear
// attention in most layers, full attention every few) say which in
// layer_types or full_attention_interval; the others cache every layer.
func kvLayers(c rawConfig) int {
	if len(c.LayerTypes) > 0 {
		n := 0
		for _, t := range c.LayerTypes {
			if t == "full_attention" || t == "attention" || t == "sliding_attention" {
				n++
			}
		}
		return n
	}
	if c.FullAttentionInterval > 0 {
		return c.NumHiddenLayers / c.FullAttentionInterval
	}
	return c.NumHiddenLayers
}

// merge fills what text_config leaves out from the outer config.
func (c *rawConfig) merge(outer rawConfig) {
	c.TorchDtype = first(c.TorchDtype, outer.TorchDtype)
	c.Dtype = first(c.Dtype, outer.Dtype)
	if c.MaxPositionEmbeddings == 0 {
		c.MaxPositionEmbeddings = outer.MaxPositionEmbeddings
	}
	if c.VocabSize == 0 {
		c.VocabSize = outer.VocabSize
	}
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func first2(qs ...*quant) *quant {
	for _, q := range qs {
		if q != nil && q.Bits > 0 {
			return q
		}
	}
	return nil
}

// Load finds and parses the config.json of ref: a config.json file, a model
// directory, or a Hugging Face repo id (org/name) looked up in the hub
// cache (hubCache; "" means $HF_HUB_CACHE, else $HF_HOME/hub, else
// ~/.cache/huggingface/hub).
func Load(ref, hubCache string) (Info, string, error) {
	path, err := Locate(ref, hubCache)
	if err != nil {
		return Info{}, "", err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Info{}, path, err
	}
	info, err := Parse(b)
	if err != nil {
		return info, path, fmt.Errorf("%s: %w", path, err)
	}
	return info, path, nil
}

// Locate returns the path of ref's config.json.
func Locate(ref, hubCache string) (string, error) {
	if ref == "" {
		return "", errors.New("no model given")
	}
	if st, err := os.Stat(ref); err == nil {
		if st.IsDir() {
			return filepath.Join(ref, "config.json"), nil
		}
		return ref, nil
	}
	if strings.Count(ref, "/") != 1 {
		return "", fmt.Errorf("model %q is neither a path nor a Hugging Face repo id", ref)
	}
	if hubCache == "" {
		hubCache = DefaultHubCache()
	}
	repo := filepath.Join(hubCache, "models--"+strings.ReplaceAll(ref, "/", "--"))
	snapshots := filepath.Join(repo, "snapshots")
	// The main ref names the snapshot the hub resolved last; without it,
	// take the newest snapshot that has a config.json.
	if rev, err := os.ReadFile(filepath.Join(repo, "refs", "main")); err == nil {
		p := filepath.Join(snapshots, strings.TrimSpace(string(rev)), "config.json")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	entries, err := os.ReadDir(snapshots)
	if err != nil {
		return "", fmt.Errorf("model %q is not in the Hugging Face cache %s", ref, hubCache)
	}
	type cand struct {
		path string
		mod  int64
	}
	var cands []cand
	for _, e := range entries {
		p := filepath.Join(snapshots, e.Name(), "config.json")
		if st, err := os.Stat(p); err == nil {
			cands = append(cands, cand{p, st.ModTime().UnixNano()})
		}
	}
	if len(cands) == 0 {
		return "", fmt.Errorf("model %q: no snapshot with a config.json in %s", ref, snapshots)
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].mod > cands[j].mod })
	return cands[0].path, nil
}

// DefaultHubCache is where the Hugging Face libraries keep downloaded models.
func DefaultHubCache() string {
	if d := os.Getenv("HF_HUB_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("HF_HOME"); d != "" {
		return filepath.Join(d, "hub")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "huggingface", "hub")
}
