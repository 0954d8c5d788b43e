package cli

import (
	"github.com/forgemem/forgemem/cmd/forgemem/internal/demo"
	"github.com/spf13/cobra"
)

func (a *app) demoCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Watch an agent form and recall memories over four sessions (offline)",
		Long: `Play four scripted sessions of a coding agent through forgemem's real capture pipeline,
memory files and retrieval engine, with offline fake models: no network, no API key, and
your own memories are not touched. It shows the conversations, the memory files capture
writes, and the memories recalled in later sessions. The files are kept in --dir if
given, else in a temporary folder removed at the end.`,
		Example: "  forgemem demo\n  forgemem demo --dir /tmp/forgemem-demo   # keep the files",
		Args:    noArgs("give --dir DIR to keep its memory files in a folder of your choice"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return demo.Run(cmd.Context(), a.env.Stdout, demo.Options{Dir: dir})
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "a new or empty folder to keep the demo's memory files in")
	return cmd
}
