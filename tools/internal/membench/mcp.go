package membench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// mcpClient speaks the Model Context Protocol to a forgemem mcp process on
// its standard streams: one JSON-RPC message per line.
type mcpClient struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

// startMCP starts forgemem mcp in the place's repository and initialises
// the session.
func startMCP(ctx context.Context, p *place) (*mcpClient, error) {
	cmd := exec.CommandContext(ctx, p.bins.forgemem, "mcp")
	cmd.Dir, cmd.Env = p.repo, p.env()
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting forgemem mcp: %w", err)
	}
	c := &mcpClient{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	_, err = c.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]string{"name": "membench", "version": "1"}})
	if err == nil {
		err = c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	}
	if err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// send writes one message.
func (c *mcpClient) send(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = c.in.Write(append(b, '\n'))
	return err
}

// call sends a request and returns its result, skipping the server's
// notifications and requests.
func (c *mcpClient) call(method string, params any) (json.RawMessage, error) {
	c.id++
	if err := c.send(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errNoMCPReply, err)
		}
		var reply struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &reply); err != nil {
			return nil, fmt.Errorf("the MCP server wrote %q: %w", line, err)
		}
		if reply.ID == nil || *reply.ID != c.id {
			continue
		}
		if reply.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, reply.Error.Message)
		}
		return reply.Result, nil
	}
}

// recall calls memory_recall with query and returns its text.
func (c *mcpClient) recall(query string) (string, error) {
	res, err := c.call("tools/call", map[string]any{"name": "memory_recall", "arguments": map[string]string{"query": query}})
	if err != nil {
		return "", err
	}
	var out struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(res, &out); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, part := range out.Content {
		b.WriteString(part.Text)
	}
	if out.IsError {
		return "", fmt.Errorf("memory_recall: %s", b.String())
	}
	return b.String(), nil
}

// close ends the session and waits for the server to exit.
func (c *mcpClient) close() {
	_ = c.in.Close()
	_ = c.cmd.Wait()
}
