package cli

import (
	"fmt"
	"strings"

	"github.com/forgemem/forgemem/settings"
	"github.com/spf13/cobra"
)

// settingsHelpTopic is forgemem help settings: every setting with its flag,
// variable, default, range, what it does and what a repository's file may
// set before the user trusts it. It is a help topic, not a command.
func settingsHelpTopic() *cobra.Command {
	return &cobra.Command{
		Use:   "settings",
		Short: "Every memory.* setting: its flag, variable, default, range and trust",
		Long:  settingsHelp(),
		Annotations: map[string]string{
			topicHint: "it lists every setting; forgemem config shows the value of each in effect, and where it came from",
		},
	}
}

// helpWidth is the width the settings help is wrapped to.
const helpWidth = 88

// settingsHelp is the text of forgemem help settings, from settings.Keys.
func settingsHelp() string {
	var b strings.Builder
	b.WriteString(wrap(`Every setting is a key under memory: in a settings file, an environment variable and a
flag. Later sources win: the defaults, ~/.forge/config.yaml, the repository's
.forge/config.yaml, the file named by --config or FORGEMEM_CONFIG, the FORGEMEM_* variables,
the flags. forgemem config shows each value in effect and where it came from. API keys
come only from OPENAI_API_KEY and GEMINI_API_KEY.`, "") + "\n\n")
	b.WriteString(wrap(`A repository's .forge/config.yaml is someone else's input: whoever committed it chose
it. Until you trust the file (forgemem trust; it is trusted until it changes), it may only
narrow what happens — turn memory off, send less, rank differently — and the values that
decide where your data and keys go, choose models or turn something on are ignored, each
with a warning. The "repository" line of each setting says which values apply. Your own
~/.forge/config.yaml, the --config file, the variables and the flags always apply.`, "") + "\n\n")
	b.WriteString(wrap(`A settings file is at most 1 MiB, a regular file (a repository's never a symbolic link),
and holds forgemem's keys under memory: beside the host agent's own keys.`, "") + "\n")
	for _, k := range settings.Keys() {
		fmt.Fprintf(&b, "\n%s  --%s  %s\n", k.Name, k.Flag, k.Env)
		facts := []string{}
		if k.Default != "" {
			facts = append(facts, "default "+k.Default)
		}
		if k.Range != "" {
			facts = append(facts, "range "+k.Range)
		}
		if len(facts) > 0 {
			b.WriteString(wrap(strings.Join(facts, "; "), "    ") + "\n")
		}
		b.WriteString(wrap(plainText(k.Doc), "    ") + "\n")
		b.WriteString(wrap("repository: "+plainText(k.Untrusted), "    ") + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// plainText drops the markdown code quotes of a key's description.
func plainText(s string) string { return strings.ReplaceAll(s, "`", "") }

// wrap fills text's words into lines of at most helpWidth runes, each
// starting with prefix.
func wrap(text, prefix string) string {
	var lines []string
	line := prefix
	for _, w := range strings.Fields(text) {
		if line != prefix && len([]rune(line))+1+len([]rune(w)) > helpWidth {
			lines = append(lines, line)
			line = prefix
		}
		if line != prefix {
			line += " "
		}
		line += w
	}
	return strings.Join(append(lines, line), "\n")
}

// settingsFootnote ends the help of every command with flags: the
// settings flags are hidden, and forgemem help settings lists them.
const settingsFootnote = `{{if or .HasAvailableLocalFlags .HasAvailableInheritedFlags}}

Every memory.* setting is also a flag (--embedding-model, --retrieval-top-k, …):
"forgemem help settings" lists them.{{end}}`

// usageTemplate is cobra's usage template with the settings footnote after
// the flags, and without a usage line of its own for a command group, which
// runs only to refuse a command line that names none of its commands (see
// refuseMissingCommands).
func usageTemplate(def string) string {
	def = strings.Replace(def, "{{if .Runnable}}", "{{if and .Runnable (not .HasSubCommands)}}", 1)
	const topics = "{{if .HasHelpSubCommands}}"
	if !strings.Contains(def, topics) {
		return def + settingsFootnote
	}
	return strings.Replace(def, topics, settingsFootnote+topics, 1)
}
