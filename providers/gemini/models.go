package gemini

import (
	"errors"
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

// checkModel reports why name cannot be a model of the given kind. Any
// endpoint: not empty, no whitespace, nothing the SDK would refuse or that
// could change the request path ("?", "&", "#", ".."). The Google
// endpoint: additionally a known family prefix.
func checkModel(name string, kind modelKind, defaultHost bool) error {
	if name == "" {
		return errors.New("model name is empty")
	}
	if strings.ContainsAny(name, "?&#%\\") || strings.Contains(name, "..") ||
		strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") ||
		strings.IndexFunc(name, unicode.IsSpace) >= 0 || strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return fmt.Errorf("model name %q holds characters a model name cannot have", name)
	}
	if !defaultHost {
		return nil
	}
	if kind == kindCompletion && strings.HasPrefix(name, "tunedModels/") && len(name) > len("tunedModels/") && !strings.Contains(name[len("tunedModels/"):], "/") {
		return nil
	}
	base := baseModelName(name)
	prefixes := completionPrefixes
	if kind == kindEmbedding {
		prefixes = embeddingPrefixes
	}
	if !strings.Contains(base, "/") {
		for _, p := range prefixes {
			if strings.HasPrefix(base, p) && len(base) > len(p) {
				return nil
			}
		}
	}
	return fmt.Errorf("%q is not a Gemini API %s model (names start with %s, optionally after \"models/\"; any name is accepted with a custom BaseURL)",
		name, kind, strings.Join(quoteAll(prefixes), " or "))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// checkDimensions reports why dims is not a valid output dimensionality
// for the embedding model. 0 (the model's default) is always valid.
func checkDimensions(model string, dims int) error {
	if dims == 0 {
		return nil
	}
	if dims < 0 {
		return fmt.Errorf("%d is negative (0 means the model's default)", dims)
	}
	r, ok := knownDimensions[baseModelName(model)]
	if !ok {
		if dims > 1<<16 {
			return fmt.Errorf("%d is implausibly large", dims)
		}
		return nil
	}
	if dims < r.min || dims > r.max {
		if r.min == r.max {
			return fmt.Errorf("%s produces %d-dimensional vectors only, not %d", model, r.min, dims)
		}
		return fmt.Errorf("%d is outside %s's range %d–%d", dims, model, r.min, r.max)
	}
	return nil
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
