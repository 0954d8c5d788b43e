package settings

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve"
)

// Section is the top-level key of a settings file under which forgemem's
// keys live; every other top-level key belongs to the host agent.
const Section = "memory"

// EnvPrefix starts the name of every forgemem environment variable.
const EnvPrefix = "FORGEMEM_"

// The table of settings. Adding a setting takes a field in [Settings] and
// one line here: the line drives file parsing, the environment variable
// and flag, validation, defaults, [Keys] and [Reference]. Lines are in the
// order the reference lists them.
//
// Every line ends with its trust rule (see [Trust]): what a repository's
// .forge/config.yaml may set before the user trusts the file. A key that
// decides where data and keys go, chooses a model or turns something on
// takes needsTrust; one that can narrow what is sent takes narrowsTo,
// narrowsUp or narrowsDown, saying which values narrow; anyValue is only for
// keys that tune work done on this machine.
var table = []key{
	boolKey("enabled", true, func(s *Settings) *bool { return &s.Enabled }, "Turns capture and retrieval on. `false` in a repository's `.forge/config.yaml` turns them off in that repository.", "the host wires capture and retrieval only when true",
		narrowsTo("false", "turn memory on")),
	intKey("cadence_turns", 1, 1, 10, func(s *Settings) *int { return &s.CadenceTurns }, "Runs a capture pass every N completed turns.", "`memcapture.Config.Cadence`",
		narrowsUp("run capture passes more often")),
	enumKey("provider", ProviderFake, []Provider{ProviderFake, ProviderOpenAI, ProviderGemini}, func(s *Settings) *Provider { return &s.Provider }, "The model provider for capture and retrieval; `fake` is offline and deterministic.", "the command's provider factory",
		needsTrust(reasonWhere)),
	stringKey("classifier_model", func(s *Settings) *string { return &s.ClassifierModel }, "The capture classifier's model; empty means the provider's default.", "`memcapture.Config.ClassifierModel`",
		needsTrust(reasonModels)),
	stringKey("retrieval_model", func(s *Settings) *string { return &s.RetrievalModel }, "The hypothesis model of retrieval; empty turns retrieval off in `llm` mode.", "`memretrieve.Config.HypothesisModel`",
		needsTrust(reasonModels)),
	enumKey("retrieval_mode", memretrieve.ModeLLM, []memretrieve.HypothesisMode{memretrieve.ModeLLM, memretrieve.ModeIdentity}, func(s *Settings) *memretrieve.HypothesisMode { return &s.RetrievalMode }, "`llm` searches with model-written hypotheses (HyDE), `identity` with the conversation itself; the `fake` provider always uses `identity`.", "`memretrieve.Config.Mode`",
		narrowsTo(string(memretrieve.ModeIdentity), "send your conversation to a model")),
	stringKey("embedding_model", func(s *Settings) *string { return &s.EmbeddingModel }, "The embedding model; empty turns retrieval off for `openai` and `gemini` (`fake` needs none).", "the provider's embedding model",
		needsTrust(reasonModels)),
	intKey("embedding_dimensions", 0, 0, 65536, func(s *Settings) *int { return &s.EmbeddingDimensions }, "The length of the embedding vectors asked of the model (OpenAI's `dimensions`, Gemini's output dimensionality, the `fake` embedder's size); 0 means the model's default (1024 for `fake`). Changing it embeds every memory again.", "the provider's embedding dimensions",
		needsTrust(reasonModels)),
	urlKey("base_url", func(s *Settings) *string { return &s.BaseURL }, "The API root of an OpenAI-compatible server, such as `http://localhost:11434/v1` for Ollama; empty means the provider's own.", "the provider's base URL",
		needsTrust(reasonWhere)),
	intKey("retrieval_top_k", 10, 1, 100, func(s *Settings) *int { return &s.RetrievalTopK }, "Memories taken from the vector index per query.", "`memretrieve.Config.TopK`",
		anyValue),
	intKey("retrieval_hop_depth", 1, 0, 3, func(s *Settings) *int { return &s.RetrievalHopDepth }, "Related-link hops followed from each hit; 0 turns graph expansion off.", "`memretrieve.Config.HopDepth`",
		anyValue),
	intKey("retrieval_hypothesis_count", 5, 1, 10, func(s *Settings) *int { return &s.RetrievalHypothesisCount }, "Hypotheses the model writes per turn in `llm` mode.", "`memretrieve.Config.HypothesisCount`",
		narrowsDown("have your model write more per turn")),
	intKey("injection_token_budget", 2000, 1, unbounded, func(s *Settings) *int { return &s.InjectionTokenBudget }, "Token budget of the recalled-memories block: whole memories are dropped to fit, lowest score first, so one larger than the budget even alone is never recalled (`remember` warns when one is written).", "`memretrieve.Config.InjectionTokenBudget`",
		narrowsDown("put more of your memories into the agent's context")),
	intKey("injection_max_memories", 8, 1, 1000, func(s *Settings) *int { return &s.InjectionMaxMemories }, "Most memories in the recalled-memories block, related ones included; the block often holds fewer, since the relevance gate stops where the evidence falls away.", "`memretrieve.Config.MaxMemories`",
		narrowsDown("put more of your memories into the agent's context")),
	durationKey("retrieval_timeout", 2*time.Second, func(s *Settings) *time.Duration { return &s.RetrievalTimeout }, "Time budget of retrieval per turn; a model that does not answer within it leaves the turn what the lexical index finds (nothing with `retrieval_lexical_weight` 0).", "`memretrieve.Config.Timeout`",
		narrowsDown("make your turns wait longer for retrieval")),
	floatKey("retrieval_min_score", 0, -1, 1, func(s *Settings) *float64 { return &s.RetrievalMinScore }, "Vector search hits with a lower cosine similarity are dropped; −1 keeps all.", "`memretrieve.Config.MinScore`",
		anyValue),
	boolKey("retrieval_quantized", false, func(s *Settings) *bool { return &s.RetrievalQuantized }, "Keeps the vector index as int8 values (a quarter of the memory) and re-ranks the best candidates with their float32 vectors from the on-disk cache.", "`memretrieve.Config.Quantized`",
		anyValue),
	intKey("retrieval_query_token_limit", 512, 1, 1_000_000, func(s *Settings) *int { return &s.RetrievalQueryTokenLimit }, "Tokens (four characters each) of each query text sent to the embedding model, newest text kept; keep it below the model's input limit.", "`memretrieve.Config.QueryTokenLimit`",
		narrowsDown("send more of your conversation to the embedding model")),
	floatKey("retrieval_lexical_weight", 1, 0, 10, func(s *Settings) *float64 { return &s.RetrievalLexicalWeight }, "Weight of the lexical (BM25) ranking against the vector ranking's 1 when the two are fused; 0 turns the lexical index off.", "`memretrieve.Config.LexicalWeight`",
		anyValue),
	intKey("retrieval_fusion_k", 60, 1, 1000, func(s *Settings) *int { return &s.RetrievalFusionK }, "The constant k of reciprocal-rank fusion: a memory ranked r-th by a ranking gains its weight/(k + r).", "`memretrieve.Config.FusionK`",
		anyValue),
	floatKey("retrieval_gate_chance", 0.05, 0.0001, 1, func(s *Settings) *float64 { return &s.RetrievalGateChance }, "The relevance gate's strictness: a memory is recalled only on evidence (informative words shared with the turn, a vector similarity above what unrelated text scores) that unrelated text would show less often than this; lower is stricter; `1` turns the gate off: the best-ranked memories are injected, at most `injection_max_memories` and within the token budget.", "`memretrieve.Config.GateChance`",
		narrowsDown("put memories into the agent's context on weaker evidence that they are relevant")),
	ranked(enumKey("stale", memretrieve.StaleLabel, []memretrieve.StaleMode{memretrieve.StaleIgnore, memretrieve.StaleLabel, memretrieve.StaleDrop}, func(s *Settings) *memretrieve.StaleMode { return &s.Stale }, "What recall does with a memory whose code moved or went away (its anchors are checked against the working tree): `label` injects it with a note saying what changed, `drop` leaves it out, `ignore` does not check.", "`memretrieve.Config.Stale`",
		narrowsUp("inject memories whose code moved or went away without a note"))),
	ranked(enumKey("review", memcore.ReviewUntrusted, []memcore.ReviewMode{memcore.ReviewOff, memcore.ReviewUntrusted, memcore.ReviewAll}, func(s *Settings) *memcore.ReviewMode { return &s.Review }, "Which new memories wait for your review (`forgemem review`) before they are recalled: `untrusted` holds those that read like instructions to the agent's tools, quote tool output or are not in your own words; `all` holds every one; `off` holds only the instruction-like ones.", "`memcapture.Config.Review`, `memcore.WriterConfig.Review`",
		narrowsUp("let memories that could be poisoned be used before you review them"))),
}

// Key describes one setting, for help texts, flag definitions and the
// reference table.
type Key struct {
	// Name is the full key, as in a file's memory: section:
	// "memory.cadence_turns".
	Name string
	// Env is the environment variable: "FORGEMEM_CADENCE_TURNS".
	Env string
	// Flag is the flag's name without dashes: "cadence-turns" (the flag is
	// --cadence-turns). It is the name [Options.Flags] is keyed by.
	Flag string
	// Type is the kind of value: "boolean", "integer", "number",
	// "duration", "string", "URL" or "one of".
	Type string
	// Default is the default as written in a file; empty when the default
	// is the empty string.
	Default string
	// Range is what is accepted, as people write it: "1–10", "≥ 1",
	// "> 0", "fake, openai or gemini"; empty when anything of the type is.
	Range string
	// Doc says what the setting does, in a sentence or two of markdown.
	Doc string
	// Setting is the library setting the value reaches, in markdown.
	Setting string
	// Trust is what a repository's .forge/config.yaml may do with the key
	// before the user trusts the file.
	Trust Trust
	// Untrusted says which values a repository's file sets before the user
	// trusts it, as the reference writes it: "any value", "`false`
	// applies; other values need trust", "a lower value applies; a higher
	// one needs trust", "needs trust".
	Untrusted string
}

// Keys returns every setting, in the order of the reference.
func Keys() []Key {
	keys := make([]Key, len(table))
	for i, k := range table {
		keys[i] = k.public()
	}
	return keys
}

// LookupKey returns the setting named name, written as in a file
// ("memory.cadence_turns" or "cadence_turns"), as an environment variable
// ("FORGEMEM_CADENCE_TURNS") or as a flag ("cadence-turns",
// "--cadence-turns").
func LookupKey(name string) (Key, bool) {
	if k := lookup(name); k != nil {
		return k.public(), true
	}
	return Key{}, false
}

// Reference returns the settings as a markdown table: key, default, range,
// environment variable, flag, what an untrusted repository's file may set
// ([Key].Untrusted), what the setting does and the library setting it
// reaches. The settings README's table is this text.
func Reference() string {
	var b strings.Builder
	b.WriteString("| key | default | range | environment variable | flag | untrusted repository file | what it does | library setting |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, k := range Keys() {
		def := ""
		if k.Default != "" {
			def = "`" + k.Default + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | `%s` | `--%s` | %s | %s | %s |\n",
			k.Name, def, k.Range, k.Env, k.Flag, k.Untrusted, k.Doc, k.Setting)
	}
	return b.String()
}

// key is one line of the table.
type key struct {
	name    string // short name: "cadence_turns"
	typ     string // Key.Type
	def     string // the default as text, parsed with set when loading starts
	rng     string // Key.Range
	doc     string
	setting string
	// want says what set accepts, for type errors: "an integer in 1–10".
	want string
	// tags are the YAML tags a file's value may have ("!!int", …).
	tags []string
	// emptyOK: a file's null value (cadence_turns: with nothing after it)
	// means the empty string rather than an error.
	emptyOK bool
	// set parses text, checks its range and stores it. It returns
	// errWrongType or errOutOfRange (possibly wrapped with a suggestion,
	// see valueError), and leaves s alone on error.
	set func(s *Settings, text string) error
	// get formats the current value as a file would write it.
	get func(s *Settings) string
	// cmp compares the values of two settings (-1, 0, 1), for the keys
	// whose trust rule narrows up or down; nil for the others.
	cmp func(a, b *Settings) int
	// trust is the key's trust rule.
	trust trustRule
	// values are the values of a boolean or one-of key, as a file writes
	// them; nil for the others.
	values []string
}

func (k *key) fullName() string { return Section + "." + k.name }
func (k *key) env() string      { return EnvPrefix + strings.ToUpper(k.name) }
func (k *key) flag() string     { return strings.ReplaceAll(k.name, "_", "-") }

func (k *key) public() Key {
	return Key{
		Name: k.fullName(), Env: k.env(), Flag: k.flag(), Type: k.typ,
		Default: k.def, Range: k.rng, Doc: k.doc, Setting: k.setting,
		Trust: k.trust.kind, Untrusted: k.untrusted(),
	}
}

// lookup finds a table entry by any of the names LookupKey accepts.
func lookup(name string) *key {
	name = strings.TrimPrefix(name, "--")
	name = strings.TrimPrefix(name, Section+".")
	if strings.HasPrefix(name, EnvPrefix) {
		name = strings.ToLower(strings.TrimPrefix(name, EnvPrefix))
	}
	name = strings.ReplaceAll(name, "-", "_")
	for i := range table {
		if table[i].name == name {
			return &table[i]
		}
	}
	return nil
}

var (
	errWrongType  = errors.New("wrong type")
	errOutOfRange = errors.New("out of range")
)

// valueError is a set failure that carries a suggestion ("openai" for
// "OpenAI").
type valueError struct {
	kind       error // errWrongType or errOutOfRange
	suggestion string
}

func (e *valueError) Error() string { return e.kind.Error() }
func (e *valueError) Unwrap() error { return e.kind }

// unbounded is intKey's upper bound for "no upper bound".
const unbounded = math.MaxInt

const (
	tagBool  = "!!bool"
	tagInt   = "!!int"
	tagFloat = "!!float"
	tagStr   = "!!str"
)

func boolKey(name string, def bool, field func(*Settings) *bool, doc, setting string, trust trustRule) key {
	return key{
		name: name, typ: "boolean", def: strconv.FormatBool(def), doc: doc, setting: setting, trust: trust,
		want: "true or false", tags: []string{tagBool}, values: []string{"true", "false"},
		set: func(s *Settings, text string) error {
			v, err := strconv.ParseBool(text)
			if err != nil {
				return errWrongType
			}
			*field(s) = v
			return nil
		},
		get: func(s *Settings) string { return strconv.FormatBool(*field(s)) },
	}
}

func intKey(name string, def, lo, hi int, field func(*Settings) *int, doc, setting string, trust trustRule) key {
	rng := fmt.Sprintf("%d–%d", lo, hi)
	if hi == unbounded {
		rng = fmt.Sprintf("≥ %d", lo)
	}
	return key{
		name: name, typ: "integer", def: strconv.Itoa(def), rng: rng, doc: doc, setting: setting, trust: trust,
		want: "an integer in " + rng, tags: []string{tagInt},
		set: func(s *Settings, text string) error {
			v, err := strconv.ParseInt(text, 10, 64)
			if err != nil {
				var ne *strconv.NumError
				if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
					return errOutOfRange
				}
				return errWrongType
			}
			if v < int64(lo) || v > int64(hi) {
				return errOutOfRange
			}
			*field(s) = int(v)
			return nil
		},
		get: func(s *Settings) string { return strconv.Itoa(*field(s)) },
		cmp: func(a, b *Settings) int { return cmp.Compare(*field(a), *field(b)) },
	}
}

func floatKey(name string, def, lo, hi float64, field func(*Settings) *float64, doc, setting string, trust trustRule) key {
	rng := formatFloat(lo) + "–" + formatFloat(hi)
	return key{
		name: name, typ: "number", def: formatFloat(def), rng: rng, doc: doc, setting: setting, trust: trust,
		want: "a number in " + rng, tags: []string{tagInt, tagFloat},
		set: func(s *Settings, text string) error {
			v, err := strconv.ParseFloat(strings.ReplaceAll(text, "−", "-"), 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsNaN(v) {
				return errWrongType
			}
			if err != nil || !(v >= lo && v <= hi) {
				return errOutOfRange
			}
			*field(s) = v
			return nil
		},
		get: func(s *Settings) string { return formatFloat(*field(s)) },
		cmp: func(a, b *Settings) int { return cmp.Compare(*field(a), *field(b)) },
	}
}

// formatFloat writes f shortly, with a true minus sign for the reference.
func formatFloat(f float64) string {
	return strings.Replace(strconv.FormatFloat(f, 'g', -1, 64), "-", "−", 1)
}

// durationKey is a Go duration (time.ParseDuration) that must be more than
// zero.
func durationKey(name string, def time.Duration, field func(*Settings) *time.Duration, doc, setting string, trust trustRule) key {
	return key{
		name: name, typ: "duration", def: def.String(), rng: "> 0", doc: doc, setting: setting, trust: trust,
		want: "a duration such as 2s or 1500ms, more than 0", tags: []string{tagStr},
		set: func(s *Settings, text string) error {
			v, err := time.ParseDuration(text)
			if err != nil {
				return errWrongType
			}
			if v <= 0 {
				return errOutOfRange
			}
			*field(s) = v
			return nil
		},
		get: func(s *Settings) string { return field(s).String() },
		cmp: func(a, b *Settings) int { return cmp.Compare(*field(a), *field(b)) },
	}
}

// stringKey is free text whose default is empty; a file may leave it
// without a value.
func stringKey(name string, field func(*Settings) *string, doc, setting string, trust trustRule) key {
	return key{
		name: name, typ: "string", doc: doc, setting: setting, trust: trust,
		want: "a string without control characters or surrounding spaces", tags: []string{tagStr, tagInt, tagFloat}, emptyOK: true,
		set: func(s *Settings, text string) error {
			if strings.ContainsFunc(text, isControl) || strings.TrimSpace(text) != text {
				return errWrongType
			}
			*field(s) = text
			return nil
		},
		get: func(s *Settings) string { return *field(s) },
	}
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// ranked orders the values of an enum key, listed in k.values from the
// widest to the narrowest, for its trust rule (narrowsUp).
func ranked(k key) key {
	rank := func(s *Settings) int {
		v := k.get(s)
		for i, name := range k.values {
			if name == v {
				return i
			}
		}
		return -1
	}
	k.cmp = func(a, b *Settings) int { return cmp.Compare(rank(a), rank(b)) }
	return k
}

// enumKey accepts one of values, exactly.
func enumKey[T ~string](name string, def T, values []T, field func(*Settings) *T, doc, setting string, trust trustRule) key {
	names := make([]string, len(values))
	for i, v := range values {
		names[i] = string(v)
	}
	rng := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	return key{
		name: name, typ: "one of", def: string(def), rng: rng, doc: doc, setting: setting, trust: trust,
		want: rng, tags: []string{tagStr}, values: names,
		set: func(s *Settings, text string) error {
			for _, v := range values {
				if string(v) == text {
					*field(s) = v
					return nil
				}
			}
			return &valueError{kind: errOutOfRange, suggestion: suggest(text, names)}
		},
		get: func(s *Settings) string { return string(*field(s)) },
	}
}

// urlKey is empty or an absolute http or https URL without credentials, a
// query or a fragment.
func urlKey(name string, field func(*Settings) *string, doc, setting string, trust trustRule) key {
	return key{
		name: name, typ: "URL", rng: "absolute http(s) URL", doc: doc, setting: setting, trust: trust,
		want: "an absolute http or https URL such as http://localhost:11434/v1", tags: []string{tagStr}, emptyOK: true,
		set: func(s *Settings, text string) error {
			if text != "" {
				u, err := url.Parse(text)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
					u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" ||
					strings.ContainsFunc(text, isControl) || strings.ContainsAny(text, " \t") {
					return errWrongType
				}
			}
			*field(s) = text
			return nil
		},
		get: func(s *Settings) string { return *field(s) },
	}
}

// maskURL hides the password of a URL before an error repeats it.
func maskURL(text string) string {
	u, err := url.Parse(text)
	if err != nil || u.User == nil {
		if i := strings.Index(text, "@"); i >= 0 && strings.Contains(text[:i], ":") {
			return "(a URL with credentials, not shown)"
		}
		return text
	}
	return u.Redacted()
}
