package main

import (
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
	var defaults map[string]string // read once a flag is left out: given all, a broken file does not matter
	for _, key := range config.DefaultFlags {
		f := cmd.Flags().Lookup(key)
		if f == nil || f.Changed {
			continue
		}
		if defaults == nil {
			cfg, err := config.Load(g.workspace)
			if err != nil {
				return usageErr("%v", err)
			}
			defaults = cfg.FlagDefaults()
		}
		if v, ok := defaults[key]; ok {
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
