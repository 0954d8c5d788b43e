package gemini

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

type modelKind int

const (
	kindCompletion modelKind = iota
	kindEmbedding
)

func (k modelKind) String() string {
	if k == kindEmbedding {
		return "embedding"
	}
	return "completion"
}

// Name prefixes of the model families the Google endpoint serves.
var (
	completionPrefixes = []string{"gemini-", "gemma-", "learnlm-"}
	embeddingPrefixes  = []string{"gemini-embedding-", "text-embedding-", "embedding-"}
)

// dimensionRange is the outputDimensionality a known embedding model
// accepts, and its default.
type dimensionRange struct {
	min, max, def int
}

// knownDimensions lists the embedding models whose dimension range is
// documented. Models not listed accept any positive Dimensions.
var knownDimensions = map[string]dimensionRange{
	"gemini-embedding-001":       {min: 128, max: 3072, def: 3072},
	"gemini-embedding-exp-03-07": {min: 128, max: 3072, def: 3072},
	"text-embedding-004":         {min: 1, max: 768, def: 768},
	"embedding-001":              {min: 768, max: 768, def: 768},
}

// baseModelName strips the "models/" resource prefix.
func baseModelName(name string) string {
	return strings.TrimPrefix(name, "models/")
}

// modelWant returns "" when name can be a model of the given kind, and
// otherwise what a name must be, for messages ("<field> is <name>, want
// <modelWant>"). Any endpoint: not empty, no whitespace, nothing the SDK
// would refuse or that could change the request path ("?", "&", "#", "%",
// "\", "..", a leading or trailing "/"). The Google endpoint: additionally
// a known family prefix.
func modelWant(name string, kind modelKind, defaultHost bool) string {
	switch {
	case name == "":
		return "a model name"
	case !safeModelName(name):
		return `a name without white space, control characters, "?", "&", "#", "%", "\", ".." or a leading or trailing "/"`
	case !defaultHost || inFamily(name, kind):
		return ""
	}
	tuned := ""
	if kind == kindCompletion {
		tuned = `, or "tunedModels/<id>"`
	}
	return fmt.Sprintf("a Gemini API %s model: a name starting with %s, optionally after \"models/\"%s (any name is accepted with a custom BaseURL)",
		kind, orList(quoteAll(familyPrefixes(kind))), tuned)
}

// safeModelName reports whether name holds nothing the SDK would refuse or
// that could change the request path: no white space or control
// characters, "?", "&", "#", "%", "\", "..", nor a leading or trailing
// "/".
func safeModelName(name string) bool {
	return !strings.ContainsAny(name, "?&#%\\") && !strings.Contains(name, "..") &&
		!strings.HasPrefix(name, "/") && !strings.HasSuffix(name, "/") &&
		!strings.ContainsFunc(name, unicode.IsSpace) && !strings.ContainsFunc(name, unicode.IsControl)
}

// inFamily reports whether name belongs to a family of models of the given
// kind that the Google endpoint serves: a family prefix followed by more,
// optionally after "models/", or, for completions, "tunedModels/<id>".
func inFamily(name string, kind modelKind) bool {
	if kind == kindCompletion {
		if id, ok := strings.CutPrefix(name, "tunedModels/"); ok && id != "" && !strings.Contains(id, "/") {
			return true
		}
	}
	base := baseModelName(name)
	if strings.Contains(base, "/") {
		return false
	}
	for _, p := range familyPrefixes(kind) {
		if strings.HasPrefix(base, p) && len(base) > len(p) {
			return true
		}
	}
	return false
}

// familyPrefixes returns the name prefixes of the families of kind.
func familyPrefixes(kind modelKind) []string {
	if kind == kindEmbedding {
		return embeddingPrefixes
	}
	return completionPrefixes
}

// checkModel reports why name cannot be a model of the given kind, or nil.
func checkModel(name string, kind modelKind, defaultHost bool) error {
	if want := modelWant(name, kind, defaultHost); want != "" {
		return fmt.Errorf("model %q: want %s", name, want)
	}
	return nil
}

// orList joins items as English does: "a", "a or b", "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// maxUnknownDimensions bounds the Dimensions of an embedding model whose
// range is not known: far above any model's, to catch a slip.
const maxUnknownDimensions = 1 << 16

// dimensionsWant returns "" when dims is a valid output dimensionality for
// the embedding model, and otherwise the values allowed. 0 (the model's
// default) is always valid.
func dimensionsWant(model string, dims int) string {
	if dims == 0 {
		return ""
	}
	r, known := knownDimensions[baseModelName(model)]
	switch {
	case known && r.min == r.max && dims != r.min:
		return fmt.Sprintf("0 or %d for %s, which has one size only (0 means the model's default)", r.min, model)
	case known && (dims < r.min || dims > r.max):
		return fmt.Sprintf("0 or %d–%d for %s (0 means the model's default)", r.min, r.max, model)
	case !known && (dims < 0 || dims > maxUnknownDimensions):
		return fmt.Sprintf("0–%d (0 means the model's default)", maxUnknownDimensions)
	}
	return ""
}

// embedIdentity is the value of [Client.Model]: the model without its
// "models/" prefix; "@<dimensions>" when Dimensions is set or the model's
// default is known (so Dimensions 0 and 3072 of gemini-embedding-001, which
// give the same vectors, share an identity); and ";task=<type>" when the
// task type is not RETRIEVAL_DOCUMENT.
func embedIdentity(model string, dims int, task TaskType) string {
	id := baseModelName(model)
	if r, ok := knownDimensions[id]; ok && dims == 0 {
		dims = r.def
	}
	if dims > 0 {
		id += "@" + strconv.Itoa(dims)
	}
	if task != TaskRetrievalDocument {
		id += ";task=" + string(task)
	}
	return id
}
