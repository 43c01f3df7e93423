package typo3

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// ErrBadDSN marks an error of Open about the DSN itself (its form, scheme or
// database name), as opposed to a database that does not answer.
var ErrBadDSN = errors.New("bad typo3 DSN")

// dsnError is an error about the DSN itself; its message is the whole text.
type dsnError struct{ msg string }

func (e *dsnError) Error() string { return e.msg }
func (e *dsnError) Unwrap() error { return ErrBadDSN }

func badDSN(format string, args ...any) error { return &dsnError{fmt.Sprintf(format, args...)} }

// Open connects to a TYPO3 database given as mysql://user:password@host:port/database
// (MariaDB or MySQL) or postgres://… (a libpq URL), and checks that it answers.
// Errors are one line and never show the password.
func Open(ctx context.Context, dsn string) (*sql.DB, Dialect, error) {
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		return nil, "", badDSN("typo3 database: want mysql://user:password@host:port/database or postgres://…, got something else")
	}
	where := u.Redacted()
	var db *sql.DB
	var d Dialect
	switch u.Scheme {
	case "mysql", "mariadb":
		d = MariaDB
		cfg := mysql.NewConfig()
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
		cfg.Net = "tcp"
		cfg.Addr = u.Host
		if u.Port() == "" {
			cfg.Addr = net.JoinHostPort(u.Hostname(), "3306")
		}
		cfg.DBName = strings.TrimPrefix(u.Path, "/")
		if cfg.DBName == "" {
			return nil, "", badDSN("typo3 database %s: the database name is missing", where)
		}
		cfg.Collation = "utf8mb4_unicode_ci"
		cfg.Timeout = 10 * time.Second
		conn, err := mysql.NewConnector(cfg)
		if err != nil {
			return nil, "", badDSN("typo3 database %s: %s", where, scrub(err, u))
		}
		db = sql.OpenDB(conn)
	case "postgres", "postgresql":
		d = Postgres
		db, err = sql.Open("pgx", dsn)
		if err != nil {
			return nil, "", badDSN("typo3 database %s: %s", where, scrub(err, u))
		}
	default:
		return nil, "", badDSN("typo3 database %s: scheme %q is not mysql or postgres", where, u.Scheme)
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, "", fmt.Errorf("typo3 database %s does not answer: %s", where, scrub(err, u))
	}
	return db, d, nil
}

// scrub is err on one line without the password of u.
func scrub(err error, u *url.URL) string {
	msg := oneLine(err.Error())
	if pw, ok := u.User.Password(); ok && pw != "" {
		msg = strings.ReplaceAll(msg, pw, "xxxxx")
	}
	return msg
}
