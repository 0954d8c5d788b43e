package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/forgemem/forgemem/settings"
	"github.com/spf13/cobra"
)

func (a *app) trustCommand() *cobra.Command {
	var revoke, list bool
	cmd := &cobra.Command{
		Use:   "trust [FILE]",
		Short: "Let a repository's settings file choose providers, servers and models",
		Long: `A repository's .forge/config.yaml is someone else's input: a clone can commit any settings.
Until you trust the file, it may only narrow what happens (memory.enabled: false, smaller
budgets), and its values that decide where your data and API keys go (memory.provider,
memory.base_url), choose models or turn memory on are ignored, each with a warning.

forgemem trust records the file's path and the SHA-256 digest of its content in
~/.forge/trusted.json, as direnv allow does, and says which of its settings now apply.
Read the file first. When it changes it is no longer trusted, and its settings that need
trust are ignored again, with a warning saying it changed, until you trust it again.

FILE defaults to the repository's .forge/config.yaml. forgemem help settings says what
each setting needs.`,
		Example: `  forgemem trust                    # the repository's .forge/config.yaml
  forgemem trust --list
  forgemem trust --revoke`,
		Args: countArgs(argCount{min: 0, max: 1, takes: "takes one file",
			hint: "trust them one at a time; without a file it trusts the repository's .forge/config.yaml"}),
		RunE: func(_ *cobra.Command, args []string) error {
			if list && (revoke || len(args) > 0) {
				return usagef("--list takes no file and no --revoke")
			}
			paths, err := settings.ResolvePaths(a.settingsOptions())
			if err != nil {
				return fmt.Errorf("the settings:\n%w", err)
			}
			if paths.TrustFile == "" {
				return errors.New("no home folder is known, so there is nowhere to record trust; set HOME")
			}
			store := settings.TrustStore{Path: paths.TrustFile}
			if list {
				return a.listTrusted(store)
			}
			file, err := a.trustTarget(paths, args)
			if err != nil {
				return err
			}
			if revoke {
				return a.revokeTrust(store, file)
			}
			return a.trust(store, file)
		},
	}
	cmd.Flags().BoolVar(&revoke, "revoke", false, "stop trusting the file")
	cmd.Flags().BoolVar(&list, "list", false, "list the trusted files and whether each changed since")
	return cmd
}

// trustTarget is the file forgemem trust works on: the argument, taken
// from the working directory, or the repository's settings file.
func (a *app) trustTarget(paths settings.Paths, args []string) (string, error) {
	if len(args) == 1 {
		file := args[0]
		if !filepath.IsAbs(file) && paths.WorkDir != "" {
			file = filepath.Join(paths.WorkDir, file)
		}
		return filepath.Clean(file), nil
	}
	if paths.RepoConfig == "" {
		return "", usagef("%v, whose .forge/config.yaml is trusted by default; or name the file", paths.RequireRepo())
	}
	return paths.RepoConfig, nil
}

// trust trusts file and says what now applies.
func (a *app) trust(store settings.TrustStore, file string) error {
	now := time.Now
	if a.env.Now != nil {
		now = a.env.Now
	}
	rec, keys, err := store.Trust(file, now())
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s does not exist; there is nothing to trust", file)
	}
	if err != nil {
		return fmt.Errorf("%s is not trusted:\n%w", file, err)
	}
	p := a.out
	p.printf("Trusted %s (sha256 %s…).\n", rec.Path, rec.SHA256[:12])
	if len(keys) == 0 {
		p.println("It sets nothing that needs trust: its settings applied already.")
	} else {
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = k.Name
		}
		p.printf("Its settings that needed your trust now apply: %s.\n", strings.Join(names, ", "))
	}
	p.println("When the file changes, trust it again; forgemem trust --revoke stops trusting it.")
	return nil
}

// revokeTrust stops trusting file.
func (a *app) revokeTrust(store settings.TrustStore, file string) error {
	removed, err := store.Revoke(file)
	if err != nil {
		return err
	}
	if removed {
		a.out.printf("No longer trusted: %s.\n", file)
	} else {
		a.out.printf("%s was not trusted.\n", file)
	}
	return nil
}

// listTrusted prints the trusted files and what each holds now.
func (a *app) listTrusted(store settings.TrustStore) error {
	recs, err := store.Records()
	if err != nil {
		return err
	}
	p := a.out
	if len(recs) == 0 {
		p.println("No settings file is trusted.")
		return nil
	}
	for _, r := range recs {
		since := "unchanged since"
		switch st, err := store.State(r.Path); {
		case errors.Is(err, fs.ErrNotExist):
			since = "missing now"
		case err != nil:
			since = "unreadable now"
		case st != settings.Trusted:
			since = "changed since: trust it again to apply it"
		}
		p.printf("%s: trusted on %s, %s\n", r.Path, minute(r.TrustedAt), since)
	}
	return nil
}
