package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	extraCmds["mcp-client"] = cmdMCPClient
}

// mcp-client FILE COMMAND [ARGS...] starts COMMAND as an MCP server over
// its stdio, with the script's environment, and sends it what FILE says,
// one line each, as a client written with the SDK's client API:
//
//	list                  print the tools' names, one a line, with (read) or (write)
//	call NAME JSON        call a tool with JSON arguments; print its text, after
//	                      "error: " for an error answer
//
// The handshake (initialize) comes first; its server name is printed as
// "server NAME VERSION".
func cmdMCPClient(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: mcp-client FILE COMMAND [ARGS...]")
	}
	script, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = scriptEnv(ts)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "script", Version: "v0"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		ts.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	out := ts.Stdout()
	info := session.InitializeResult().ServerInfo
	fmt.Fprintf(out, "server %s %s\n", info.Name, info.Version)
	sc := bufio.NewScanner(strings.NewReader(string(script)))
	for sc.Scan() {
		verb, rest, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		switch verb {
		case "", "#":
		case "list":
			for tool, err := range session.Tools(ctx, nil) {
				ts.Check(err)
				kind := "write"
				if tool.Annotations.ReadOnlyHint {
					kind = "read"
				}
				fmt.Fprintf(out, "%s (%s)\n", tool.Name, kind)
			}
		case "call":
			name, raw, _ := strings.Cut(rest, " ")
			var callArgs map[string]any
			if raw != "" {
				ts.Check(json.Unmarshal([]byte(raw), &callArgs))
			}
			res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: callArgs})
			ts.Check(err)
			prefix := ""
			if res.IsError {
				prefix = "error: "
			}
			for _, c := range res.Content {
				if t, ok := c.(*mcp.TextContent); ok {
					fmt.Fprintf(out, "%s%s\n", prefix, t.Text)
				}
			}
		default:
			ts.Fatalf("mcp-client: unknown line %q", sc.Text())
		}
	}
	ts.Check(session.Close())
	if s := stderr.String(); s != "" {
		fmt.Fprintf(ts.Stderr(), "%s", s)
	}
}

// scriptEnv is this process's environment with the script's values of the
// variables a command reads.
func scriptEnv(ts *testscript.TestScript) []string {
	env := os.Environ()
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "WORK", "COLLAB_URL", "COLLAB_TOKEN", "COLLAB_TOKEN_KIND", "COLLAB_REPO", "XDG_CONFIG_HOME"} {
		env = append(env, k+"="+ts.Getenv(k))
	}
	return env
}
