//! The `query` tool runs only read-only SQL: one `SELECT` / `WITH` / `VALUES` query, a
//! `DESCRIBE spans`, or an `EXPLAIN [ANALYZE]` of such a query. Everything else (DDL, DML, `COPY`,
//! `CREATE EXTERNAL TABLE`, `SET`, several statements) is refused before planning.
//!
//! Why a parser check on top of DataFusion's own `SQLOptions` (which the engine also applies to
//! the plan): the tool announces `readOnlyHint: true`, a promise an agent acts on, so the check
//! is an allowlist of statement kinds read off the syntax tree, not a denylist of plan nodes; and
//! a refusal names the statement, so the caller learns what to send instead. The plan-level
//! check catches what the syntax hides (`SELECT … INTO t` plans as a `CREATE TABLE`).

use datafusion::sql::parser::{DFParser, Statement as DfStatement};
use datafusion::sql::sqlparser::ast::Statement as SqlStatement;

use crate::error::ToolError;

/// What the tool accepts, for messages and the tool description.
pub const ACCEPTED: &str =
    "one read-only statement: SELECT / WITH / VALUES, DESCRIBE spans, or EXPLAIN [ANALYZE] SELECT";

/// Checks that `sql` is one read-only statement. `Ok` carries nothing: the engine plans the text
/// itself (DataFusion parses it again, which costs microseconds).
pub fn check_read_only(sql: &str) -> Result<(), ToolError> {
    if sql.trim().is_empty() {
        return Err(ToolError::BadArgument(format!(
            "`sql` is empty; send {ACCEPTED} over the table `spans`"
        )));
    }
    let statements = DFParser::parse_sql(sql).map_err(|e| {
        ToolError::Query(format!(
            "cannot parse the SQL: {e}; the table is `spans`, run `DESCRIBE spans` for its columns"
        ))
    })?;
    match statements.len() {
        1 => {}
        0 => {
            return Err(ToolError::BadArgument(format!(
                "`sql` holds no statement; send {ACCEPTED}"
            )))
        }
        n => {
            return Err(ToolError::NotReadOnly(format!(
                "`sql` holds {n} statements; send {ACCEPTED}, one per call"
            )))
        }
    }
    check_statement(&statements[0])
}

fn check_statement(statement: &DfStatement) -> Result<(), ToolError> {
    match statement {
        DfStatement::Statement(s) => match s.as_ref() {
            SqlStatement::Query(_) | SqlStatement::ExplainTable { .. } => Ok(()),
            other => Err(refuse(&statement_kind(other))),
        },
        DfStatement::Explain(explain) => check_statement(&explain.statement),
        DfStatement::CreateExternalTable(_) => Err(refuse("CREATE EXTERNAL TABLE")),
        DfStatement::CopyTo(_) => Err(refuse("COPY")),
        DfStatement::Reset(_) => Err(refuse("RESET")),
    }
}

fn refuse(what: &str) -> ToolError {
    ToolError::NotReadOnly(format!(
        "{what} is not allowed: this tool is read-only and accepts {ACCEPTED}"
    ))
}

/// `Statement::CreateTable(…)` -> `CREATE TABLE`: the statement's kind for a message, read off
/// the syntax tree's variant name, without echoing the caller's text back.
fn statement_kind(statement: &SqlStatement) -> String {
    let debug = format!("{statement:?}");
    let variant: String = debug
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    let mut out = String::new();
    for c in variant.chars() {
        if c.is_ascii_uppercase() && !out.is_empty() {
            out.push(' ');
        }
        out.push(c.to_ascii_uppercase());
    }
    if out.is_empty() {
        "this statement".to_string()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(sql: &str) -> String {
        match check_read_only(sql) {
            Err(ToolError::NotReadOnly(m)) => m,
            other => panic!("{sql:?} was not refused as a write: {other:?}"),
        }
    }

    #[test]
    fn read_only_statements_pass() {
        for sql in [
            "SELECT count(*) FROM spans",
            "select service_name, count(*) from spans group by 1 order by 2 desc",
            "WITH t AS (SELECT trace_id FROM spans) SELECT count(*) FROM t",
            "VALUES (1), (2)",
            "DESCRIBE spans",
            "EXPLAIN SELECT * FROM spans",
            "EXPLAIN ANALYZE SELECT count(*) FROM spans",
            "SELECT 1;",
        ] {
            assert!(check_read_only(sql).is_ok(), "{sql} was refused");
        }
    }

    #[test]
    fn writes_and_ddl_are_refused_naming_the_statement() {
        assert!(refused("INSERT INTO spans VALUES (1)").starts_with("INSERT is not allowed"));
        assert!(refused("DELETE FROM spans").starts_with("DELETE is not allowed"));
        assert!(refused("UPDATE spans SET name = 'x'").starts_with("UPDATE"));
        assert!(refused("DROP TABLE spans").starts_with("DROP"));
        assert!(refused("CREATE TABLE t AS SELECT * FROM spans").starts_with("CREATE TABLE"));
        assert!(refused("CREATE VIEW v AS SELECT 1").starts_with("CREATE VIEW"));
        assert!(
            refused("CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION '/etc/'")
                .starts_with("CREATE EXTERNAL TABLE")
        );
        assert!(refused("COPY spans TO '/tmp/x.parquet'").starts_with("COPY"));
        assert!(refused("COPY (SELECT 1) TO '/tmp/x.csv'").starts_with("COPY"));
        assert!(refused("SET datafusion.execution.batch_size = 1").starts_with("SET"));
        assert!(refused("EXPLAIN COPY spans TO '/tmp/x.parquet'").starts_with("COPY"));
        assert!(refused("EXPLAIN INSERT INTO spans VALUES (1)").starts_with("INSERT"));
    }

    #[test]
    fn several_statements_are_refused() {
        let m = refused("SELECT 1; DROP TABLE spans");
        assert!(m.contains("2 statements"), "{m}");
    }

    #[test]
    fn empty_and_unparsable_sql_are_argument_errors() {
        assert!(matches!(
            check_read_only("   "),
            Err(ToolError::BadArgument(_))
        ));
        match check_read_only("SELEC * FROM spans") {
            Err(ToolError::Query(m)) => assert!(m.starts_with("cannot parse the SQL"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
}
