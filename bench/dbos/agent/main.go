// Command agent is the bare SDK loop of bench/wall12 made durable the way
// a DBOS Transact user would (issue 19): one workflow per process, each
// model call and each tool call a DBOS step whose result is checkpointed
// in PostgreSQL before the loop goes on. bench/wall12/run.sh runs it as
// the variant "dbos" beside flower once and the bare loop, so that what
// each adds per turn is measured in one run.
//
//	agent -db URL [-request FILE] [-model NAME] PROMPT
//
// URL names a database this command may own (it creates it when missing,
// and DBOS its schema there). The tools are bench/wall12/loop's: no
// sandbox, as DBOS offers none.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/flower-run/flower/bench/dbos/durable"
)

func main() {
	db := flag.String("db", "", "the PostgreSQL database the workflow state lives in")
	request := flag.String("request", "", "take the system prompt and tool definitions from this request body")
	modelName := flag.String("model", "claude-sonnet-4-6", "the model to ask")
	flag.Parse()
	if flag.NArg() != 1 || *db == "" {
		fmt.Fprintln(os.Stderr, "usage: agent -db URL [-request FILE] [-model NAME] PROMPT")
		os.Exit(2)
	}
	if err := run(*db, durable.Task{Prompt: flag.Arg(0), Request: *request, Model: *modelName}); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

func run(db string, in durable.Task) error {
	ctx := context.Background()
	if err := ensureDatabase(ctx, db); err != nil {
		return err
	}
	d, err := dbos.NewContext(ctx, dbos.Config{AppName: "wall12", DatabaseURL: db,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return fmt.Errorf("dbos: %w", err)
	}
	defer dbos.Shutdown(d, 5*time.Second)
	dbos.RegisterWorkflow(d, durable.Session, dbos.WithWorkflowName(durable.Name))
	if err := dbos.Launch(d); err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	h, err := dbos.RunWorkflow(d, durable.Session, in, dbos.WithWorkflowID(uuid.NewString()))
	if err != nil {
		return err
	}
	summary, err := h.GetResult()
	if err != nil {
		return err
	}
	fmt.Println("\n" + summary)
	return nil
}

// ensureDatabase creates the database db names, through the server's
// postgres database, when it is not there yet.
func ensureDatabase(ctx context.Context, db string) error {
	u, err := url.Parse(db)
	if err != nil {
		return fmt.Errorf("-db: %w", err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	u.Path = "/postgres"
	admin, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return fmt.Errorf("connect %s: %w", u.Redacted(), err)
	}
	defer admin.Close(ctx)
	var there bool
	if err := admin.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&there); err != nil || there {
		return err
	}
	_, err = admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	return err
}
