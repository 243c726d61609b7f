package sqlite

import (
	"context"
	"database/sql/driver"
	"reflect"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// noCheckpointConnector opens connections with
// SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE set: closing the last connection to the
// file leaves the WAL as it is (doc.go, "Closing a store").
type noCheckpointConnector struct {
	driver.Connector
}

// newConnector is the connector of dsn whose connections do not
// checkpoint on close.
func newConnector(dsn string) (driver.Connector, error) {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return noCheckpointConnector{c}, nil
}

// Connect opens a connection and sets the option on it.
func (c noCheckpointConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	noCheckpointOnClose(conn)
	return conn, nil
}

// noCheckpointOnClose sets SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE on conn and
// reports whether it could. The driver does not expose sqlite3_db_config,
// so the connection's handle and its libc thread state are read from its
// fields by name and type. A driver whose fields differ leaves the option
// unset: SQLite then checkpoints on close as it always did, which is slower
// but as durable, and TestCloseLeavesTheWAL fails so that we notice.
func noCheckpointOnClose(conn driver.Conn) bool {
	v := reflect.ValueOf(conn)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return false
	}
	db, tls := v.Elem().FieldByName("db"), v.Elem().FieldByName("tls")
	if !db.IsValid() || db.Kind() != reflect.Uintptr || !tls.IsValid() || tls.Type() != reflect.TypeFor[*libc.TLS]() || tls.IsNil() {
		return false
	}
	t := (*libc.TLS)(unsafe.Pointer(tls.Pointer()))
	bp := libc.Xmalloc(t, 16) // two va_list slots: the value and a NULL result pointer
	if bp == 0 {
		return false
	}
	defer libc.Xfree(t, bp)
	va := libc.VaList(bp, int32(1), uintptr(0))
	return sqlite3.Xsqlite3_db_config(t, uintptr(db.Uint()), sqlite3.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, va) == sqlite3.SQLITE_OK
}
