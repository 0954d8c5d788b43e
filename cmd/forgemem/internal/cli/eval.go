package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/eval"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve"
	"github.com/forgemem/forgemem/settings"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
)

// evalMinTimeout is the least time eval gives one Retrieve call, so that a
// slow provider shows in the latency figures rather than as memories not
// found.
const evalMinTimeout = 30 * time.Second

func (a *app) evalCommand() *cobra.Command {
	var (
		dataset, madialDir, locomoFile, model, hypotheses, ks, offTopic string
		asJSON                                                          bool
	)
	cmd := &cobra.Command{
		Use:   "eval (--dataset FILE | --madial DIR | --locomo FILE)",
		Short: "Measure how well retrieval recalls the right memories on a dataset",
		Long: `Measure retrieval on a dataset: JSON Lines, one collection per line,
  {"collection": "name",
   "memories": [{"id": "m1", "content": "…", "category": "…", "scope": "…"}, …],
   "queries":  [{"id": "q1", "text": "…", "relevant": ["m1", …]}, …]}
where a query may be a conversation instead of a text ("messages": [{"role": "user",
"content": "…"}, …]); category (default user-facts) and scope (default user) are optional.
Each collection goes into a fresh temporary memory folder and through the real retrieval
engine with the settings' retrieval configuration; each query is ranked against its own
collection and scored: recall@k, hit@k, MRR, the latency of a retrieval (p50, p95) and the
texts embedded. A query with "relevant": [] is off topic. What the injection — the block an
agent gets — holds is measured too: on topic, the share holding a relevant memory; off topic,
the share that is not empty; the memories and tokens of each. --offtopic FILE adds the
queries of FILE (JSON Lines, {"id", "text"} each) to every collection as off-topic ones, and
their figures are given apart too (off_topic_added in --json). Each retrieval gets at least
30s (memory.retrieval_timeout if longer).

--madial DIR converts the MADial-Bench benchmark (its memory-en.jsonl and dialogue-en.jsonl,
or a clone of its repository) into such a dataset and writes it to stdout. --locomo FILE does
the same for the LoCoMo benchmark's locomo10.json (github.com/snap-research/locomo, CC BY-NC
4.0, not shipped with forgemem): one collection per conversation, its observations as the
memories and its questions of categories 1–4 as the queries.

Any OpenAI-compatible embedding server works through --provider openai --base-url URL; in a
forgemem checkout, go run ./tools/cmd/embedserver -- forgemem eval … runs the evaluation with
an offline neural embedder (the Universal Sentence Encoder lite). The repository's
docs/EVALUATION.md has the published figures and the commands that reproduce them.`,
		Example: `  forgemem eval --madial cmd/forgemem/internal/eval/testdata/madial > madial.jsonl   # in a checkout
  forgemem eval --locomo locomo10.json > locomo.jsonl
  forgemem eval --dataset madial.jsonl                       # the offline default: fake provider
  forgemem eval --dataset madial.jsonl --provider openai --model text-embedding-3-small
  forgemem eval --dataset madial.jsonl --provider openai --base-url http://localhost:11434/v1 --model nomic-embed-text`,
		Args: noArgs("give the dataset with --dataset FILE, or convert one with --madial DIR or --locomo FILE"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			given := 0
			for _, v := range []string{dataset, madialDir, locomoFile} {
				if v != "" {
					given++
				}
			}
			if given != 1 {
				return usagef("give exactly one of --dataset FILE, --madial DIR and --locomo FILE")
			}
			switch {
			case madialDir != "":
				return a.convertMADial(cmd.Context(), madialDir)
			case locomoFile != "":
				return a.convertLoCoMo(cmd, locomoFile)
			}
			cutoffs, err := parseKs(ks)
			if err != nil {
				return err
			}
			mode := memretrieve.HypothesisMode(hypotheses)
			if !mode.Valid() {
				return usagef("--hypotheses %q: want identity or llm", hypotheses)
			}
			return a.runEval(cmd.Context(), evalRun{dataset: dataset, offTopic: offTopic, model: model, mode: mode,
				ks: cutoffs, json: asJSON})
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataset, "dataset", "", `the dataset file ("-" reads stdin)`)
	f.StringVar(&offTopic, "offtopic", "", "a file of off-topic queries (JSON Lines, {\"id\", \"text\"} each) added to every collection")
	f.StringVar(&madialDir, "madial", "", "convert MADial-Bench from this folder and write the dataset to stdout")
	f.StringVar(&locomoFile, "locomo", "", "convert LoCoMo's locomo10.json and write the dataset to stdout")
	f.StringVar(&model, "model", "", "the embedding model (memory.embedding_model)")
	f.StringVar(&hypotheses, "hypotheses", string(memretrieve.ModeIdentity), "what is searched with: identity (the conversation) or llm (the hypothesis model's sentences, memory.retrieval_model)")
	f.StringVar(&ks, "k", "5,10,20", "the cut-offs of recall@k and hit@k, comma-separated")
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	// The settings flags eval uses beside --provider, shown in its help
	// (they are hidden elsewhere); loadSettings reads them from here.
	for _, fl := range []struct{ name, usage string }{
		{"base-url", "the API root of an OpenAI-compatible server, with --provider openai, such as http://localhost:11434/v1"},
		{"retrieval-model", "the hypothesis model, with --hypotheses llm"},
		{"retrieval-top-k", "memories taken from the vector index per query"},
		{"retrieval-lexical-weight", "the lexical ranking's weight in the fusion; 0 turns it off"},
		{"retrieval-fusion-k", "the constant k of reciprocal-rank fusion"},
		{"retrieval-gate-chance", "the relevance gate's strictness: lower is stricter, 1 turns it off"},
		{"injection-max-memories", "the most memories an injection holds"},
	} {
		k, _ := settings.LookupKey(fl.name)
		f.Var(&settingFlag{typ: k.Type}, k.Flag, fl.usage+" ("+k.Name+")")
	}
	return cmd
}

// settingFlag is a settings flag defined on one command to show in its
// help: it keeps the text given, which the settings module checks, and
// names its type as the settings do.
type settingFlag struct{ value, typ string }

func (f *settingFlag) String() string     { return f.value }
func (f *settingFlag) Set(v string) error { f.value = v; return nil }
func (f *settingFlag) Type() string       { return f.typ }

// evalRun is one evaluation asked for on the command line.
type evalRun struct {
	dataset, offTopic, model string
	mode                     memretrieve.HypothesisMode
	ks                       []int
	json                     bool
}

// parseKs reads the --k list.
func parseKs(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || k < 1 {
			return nil, usagef("--k %q: want positive whole numbers separated by commas, such as 5,10,20", s)
		}
		out = append(out, k)
	}
	return out, nil
}

// convertMADial writes the dataset converted from MADial-Bench in dir.
func (a *app) convertMADial(ctx context.Context, dir string) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usagef("--madial %s: not a folder", dir)
	}
	cols, err := interruptible(ctx, func() ([]eval.Collection, error) { return eval.MADial(os.DirFS(dir)) })
	if err != nil {
		return err
	}
	return eval.WriteDataset(a.env.Stdout, cols)
}

// convertLoCoMo writes the dataset converted from the LoCoMo file at path,
// and says on stderr which questions it left out.
func (a *app) convertLoCoMo(cmd *cobra.Command, path string) error {
	data, err := interruptible(cmd.Context(), func() ([]byte, error) {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, usagef("--locomo: %v", err)
		}
		return data, nil
	})
	if err != nil {
		return err
	}
	cols, skipped, err := eval.LoCoMo(data)
	if err != nil {
		return err
	}
	if err := eval.WriteDataset(a.env.Stdout, cols); err != nil {
		return err
	}
	queries := 0
	for _, c := range cols {
		queries += len(c.Queries)
	}
	eprintf(a.env.Stderr, "%s: %s in %s; left out %s (category 5) and %s no observation cites\n",
		cmd.CommandPath(), plural(queries, "query", "queries"), plural(len(cols), "collection", "collections"),
		plural(skipped.Adversarial, "adversarial question", "adversarial questions"),
		plural(skipped.Uncited, "question whose evidence", "questions whose evidence"))
	return nil
}

// runEval reads the dataset, makes the models and runs the evaluation.
func (a *app) runEval(ctx context.Context, r evalRun) error {
	if r.dataset == "-" {
		a.sayReadingTerminal("the dataset", "JSON Lines, one collection per line")
	}
	cols, err := interruptible(ctx, func() ([]eval.Collection, error) { return a.evalCollections(r) })
	if err != nil {
		return err
	}
	if r.model != "" {
		if err := a.root.PersistentFlags().Set("embedding-model", r.model); err != nil {
			return err
		}
	}
	if err := a.loadSettings(); err != nil {
		return err
	}
	s := a.settings
	emb, llm, err := a.evalModels(s, r.mode)
	if err != nil {
		return err
	}
	cfg := s.RetrieveConfig()
	cfg.Mode = r.mode
	cfg.Timeout = max(cfg.Timeout, evalMinTimeout)

	opts := eval.Options{Embedder: emb, LLM: llm, Config: cfg, Ks: r.ks}
	if a.env.IsTerminal(a.env.Stderr) {
		p := &evalProgress{w: a.env.Stderr}
		defer p.finish()
		opts.Progress = p.update
	}
	report, err := eval.Run(ctx, cols, opts)
	if err != nil {
		return err
	}
	if r.json {
		js, err := report.JSON(map[string]any{
			"provider": s.Provider, "embedding_model": emb.Model(), "hypotheses": r.mode,
			"lexical_weight": cfg.LexicalWeight, "fusion_k": cfg.FusionK, "top_k": cfg.TopK,
			"gate_chance": cfg.GateChance, "max_memories": cfg.MaxMemories, "injection_token_budget": cfg.InjectionTokenBudget,
		})
		if err != nil {
			return err
		}
		a.out.println(string(js))
		return nil
	}
	a.out.printf("%s, embedding model %s, %s queries; lexical weight %g, fusion k %d, top %d per query; gate chance %g, at most %d memories, %d tokens\n\n",
		s.Provider, emb.Model(), r.mode, cfg.LexicalWeight, cfg.FusionK, cfg.TopK, cfg.GateChance, cfg.MaxMemories, cfg.InjectionTokenBudget)
	return report.WriteText(a.env.Stdout)
}

// evalCollections reads the dataset, with the off-topic queries added to
// every collection when a file of them is given.
func (a *app) evalCollections(r evalRun) ([]eval.Collection, error) {
	cols, err := a.readDataset(r.dataset)
	if err != nil || r.offTopic == "" {
		return cols, err
	}
	return a.addOffTopic(cols, r.offTopic)
}

// evalModels makes the embedder and, in mode llm, the hypothesis model of
// an evaluation with settings s.
func (a *app) evalModels(s *settings.Settings, mode memretrieve.HypothesisMode) (memcore.Embedder, memcore.LLMProvider, error) {
	if s.Provider == settings.ProviderFake && mode == memretrieve.ModeLLM {
		return nil, nil, usagef("--hypotheses llm needs a model that writes them; the fake provider has none (use --provider openai or gemini)")
	}
	models, err := workspace.NewModels(s, a.env.HTTPClient)
	if err != nil {
		return nil, nil, err
	}
	emb, err := models.NeedEmbedder()
	if err != nil {
		return nil, nil, err
	}
	var llm memcore.LLMProvider
	if mode == memretrieve.ModeLLM {
		if llm, err = models.NeedLLM(); err != nil {
			return nil, nil, err
		}
	}
	return emb, llm, nil
}

// addOffTopic adds the off-topic queries of the file at path to every
// collection.
func (a *app) addOffTopic(cols []eval.Collection, path string) ([]eval.Collection, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usagef("--offtopic: %v", err)
	}
	defer f.Close()
	qs, err := eval.ReadOffTopic(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return eval.AddOffTopic(cols, qs)
}

// readDataset reads the dataset file, or stdin for "-"; its errors name
// the file.
func (a *app) readDataset(path string) ([]eval.Collection, error) {
	var in io.Reader = a.env.Stdin
	name := "stdin"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, usagef("--dataset: %v", err)
		}
		defer f.Close()
		in, name = f, path
	}
	cols, err := eval.ReadDataset(in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return cols, nil
}

// evalProgress shows on a terminal how many queries are done.
type evalProgress struct {
	w   io.Writer
	bar *progressbar.ProgressBar
}

func (p *evalProgress) update(done, total int) {
	if p.bar == nil {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription("evaluating queries"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionClearOnFinish(),
		)
	}
	_ = p.bar.Set(done)
}

func (p *evalProgress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
