package cli

import (
	"errors"
	"io"
	"log/slog"
	"strings"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/mcpserver"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/resident"
	"github.com/forgemem/forgemem/memcore"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
)

func (a *app) mcpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve the memories to any agent over the Model Context Protocol (stdio)",
		Long: `Run an MCP server on stdin and stdout, for agents that speak the Model Context Protocol
(Claude Code, Cursor, Cline, Codex, Gemini CLI, …). It offers the tools memory_recall,
memory_search, memory_remember, memory_show, memory_forget and memory_list over the memory
folders of the place it runs in, with the settings and global flags of every command. The
retrieval index stays in memory for the server's life and follows every change of the
memory folders, whoever made it: on Linux by their file events, reading only the files that
changed; elsewhere by looking at the folders before each call. Stdout carries the protocol only; messages and
--verbose logs go to stderr.

A line on stdin that is not one JSON-RPC message, or is longer than 1 MiB, is answered with
a JSON-RPC error and the server reads on. At most 8 tool calls run at once and 32 wait; a
call beyond those gets a "busy" tool error. When stdin ends, the calls still running are
answered (within 30 seconds) and the server exits 0.

Add it to Claude Code with: claude mcp add forgemem -- forgemem mcp
docs/INTEGRATIONS.md has the set-up of every agent.`,
		Args: noArgs(""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The index follows the folders by their file events where the
			// system has them; else the folders are read before each call.
			if dir, err := resident.BarrierDir(a.env.Settings.Env); err == nil {
				a.liveDir = dir
			}
			ws, err := a.workspace()
			if err != nil {
				return err
			}
			logger := slog.New(slog.NewTextHandler(io.Discard, nil))
			if a.verbose {
				logger = slog.New(slog.NewTextHandler(a.env.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
			}
			var dirs []string
			for _, sc := range memcore.Scopes() {
				if d := ws.Store().Dir(sc); d != "" {
					dirs = append(dirs, d)
				}
			}
			eprintf(a.env.Stderr, "forgemem mcp: serving the memories of %s over stdio\n", strings.Join(dirs, " and "))
			srv := mcpserver.New(ws, mcpserver.Options{Logger: logger, ToCommit: a.toCommit})
			t := &mcpserver.Transport{In: a.env.Stdin, Out: a.env.Stdout, Logger: logger}
			err = srv.Run(cmd.Context(), t)
			if err != nil && (cmd.Context().Err() != nil || clientGone(err)) {
				return nil // the client went away, or an interrupt: a server's normal end
			}
			return err
		},
	}
}

// codeServerClosing is the JSON-RPC error code the SDK ends a session with
// when the client's end of the stream closed ("server is closing").
const codeServerClosing = -32004

// clientGone reports whether err ended the session because the client
// closed its end of the stream.
func clientGone(err error) bool {
	var we *jsonrpc.Error
	return errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) ||
		errors.As(err, &we) && we.Code == codeServerClosing
}
