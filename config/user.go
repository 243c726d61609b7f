package config

import (
	"os"
	"path/filepath"
)

// UserFileName is the user-level config's name, in UserDir.
const UserFileName = "config.yaml"

// UserDir is where flower keeps the person's own settings and
// instructions: $XDG_CONFIG_HOME/flower, else ~/.config/flower (R10.2).
// "" when neither is known.
func UserDir() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "flower")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".config", "flower")
}

// UserFile is the user-level config.yaml; "" when UserDir is unknown.
func UserFile() string {
	dir := UserDir()
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, UserFileName)
}
