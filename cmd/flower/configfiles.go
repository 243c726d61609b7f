package main

import (
	"fmt"
	"io"

	"github.com/flower-run/flower/config"
)

// printFilesRead lists, a line each, the configuration files a run in ws
// reads (issue 21 item 5).
func printFilesRead(out io.Writer, ws string) {
	for _, f := range config.FilesRead(ws) {
		fmt.Fprintf(out, "config     %s (%s)\n", tilde(f.Path), f.What)
	}
}
