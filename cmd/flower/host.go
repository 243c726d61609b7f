package main

import (
	"context"
	"io"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/config"
)

// openHost takes the workspace for this process through the library's one
// assembly point, with the settings of the command line.
func (g *globals) openHost(ctx context.Context, cfg config.Config, out io.Writer) (*flower.Host, error) {
	u, err := g.storeURL()
	if err != nil {
		return nil, err
	}
	h, err := flower.Open(ctx, flower.Options{Workspace: g.workspace, RunDir: g.runDir, StoreURL: u, Config: &cfg,
		Model: g.model, IdleTimeout: g.idle, NoTrim: g.noTrim, Secrets: g.secrets, Notice: out})
	return h, fail(err)
}

// tilde shows a path with ~ for the home directory.
var tilde = flower.Tilde
