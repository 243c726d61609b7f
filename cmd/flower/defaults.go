package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flower-run/flower/config"
)

// configDefaults sets, from the user's config.yaml and the workspace's
// flower.yaml (R10.2), the flags of cmd that the command line left out.
// Precedence: the command line, then $FLOWER_MODEL for the model, then
// flower.yaml, then config.yaml, then the built-in default. Only the
// commands that run agents (flower [TASK], serve, once) read the files.
func configDefaults(cmd *cobra.Command, g *globals) error {
	if cmd.Flags().Lookup("max-turns") == nil {
		return nil // not a command that runs agents (status, show...): a broken file must not stop it
	}
	cfg, loaded := config.Config{}, false
	for key, value := range map[string]func(config.Config) (string, bool){
		"model": func(c config.Config) (string, bool) {
			return c.Model.Name, c.Model.Name != "" && os.Getenv("FLOWER_MODEL") == ""
		},
		"timeout":   func(c config.Config) (string, bool) { return ptr(c.Timeout) },
		"max-turns": func(c config.Config) (string, bool) { return ptr(c.MaxTurns) },
		"max-asks":  func(c config.Config) (string, bool) { return ptr(c.MaxAsks) },
		"rounds":    func(c config.Config) (string, bool) { return ptr(c.Rounds) },
		"budget":    func(c config.Config) (string, bool) { return ptr(c.Budget) },
	} {
		f := cmd.Flags().Lookup(key)
		if f == nil || f.Changed {
			continue
		}
		if !loaded {
			var err error
			if cfg, err = config.Load(g.workspace); err != nil {
				return usageErr("%v", err)
			}
			loaded = true
		}
		if v, ok := value(cfg); ok {
			if err := setDefault(f, v); err != nil {
				return usageErr("%s: %s: %v", config.UserFile(), key, err)
			}
		}
	}
	return nil
}

// setDefault sets a flag without marking it given on the command line.
func setDefault(f *pflag.Flag, v string) error {
	if err := f.Value.Set(v); err != nil {
		return err
	}
	f.Changed = false
	return nil
}

func ptr[T any](p *T) (string, bool) {
	if p == nil {
		return "", false
	}
	return fmt.Sprint(*p), true
}
