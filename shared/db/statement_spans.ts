/**
 * A CLIENT span for every statement the services send, named by what it does (`SELECT quotes`,
 * `INSERT outbox`, `BEGIN`), per the OpenTelemetry database conventions. postgres.js has no
 * tracing hook and no instrumentation library exists for it, so while an SDK is registered
 * (OTEL_DENO=true) the spans are started where postgres.js hands a statement on (its query's
 * `handle`, patched once) and ended where the answer settles it; without an SDK nothing is
 * patched and a statement costs what it did.
 *
 * What a span holds: `db.system.name`, `db.namespace` (the database), `db.operation.name`,
 * `db.collection.name` (the first table named), `db.query.summary` and, on failure, `error.type`
 * and `db.response.status_code` (the SQLSTATE). Never the statement's text: the parameters are
 * not in it, but a transaction's BEGIN names its organisation, and a span name must stay of low
 * cardinality anyway.
 *
 * Pipelined work (shared/db/mod.ts `transaction`): a span starts when the code hands the
 * statement to the driver and ends with its answer, so a BEGIN sent with the first statement,
 * the statements sent ahead and the COMMIT carrying the last writes overlap in time, as they do
 * on the wire; a statement held back for the COMMIT (`sendBeforeCommit`) ends when the COMMIT's
 * round trip answers it. Each is a child of the span active where it was sent.
 */
import { type Span, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type postgres from "postgres";
import { inRecordedTrace, tracer, tracing } from "../telemetry.ts";

/** What the patch reads and replaces of a postgres.js query (postgres@3.4.7, src/query.js). */
interface DriverQuery {
  executed: boolean;
  /** Set by `cursor()`, before the query is handed on. */
  cursorFn?: unknown;
  string?: string;
  handle(): Promise<void>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

const OPERATION = /^\s*(?:--[^\n]*\n\s*)*([a-z]+)/i;
const IDENTIFIER = String.raw`("?[a-z_][a-z0-9_$]*"?(?:\."?[a-z_][a-z0-9_$]*"?)?)`;
const TARGETS: Record<string, RegExp> = {
  SELECT: new RegExp(String.raw`\bfrom\s+${IDENTIFIER}`, "i"),
  INSERT: new RegExp(String.raw`\binsert\s+into\s+${IDENTIFIER}`, "i"),
  UPDATE: new RegExp(String.raw`\bupdate\s+${IDENTIFIER}`, "i"),
  DELETE: new RegExp(String.raw`\bdelete\s+from\s+${IDENTIFIER}`, "i"),
};
const WRITE_IN_WITH = /\b(insert\s+into|update|delete\s+from)\s/i;

export interface StatementSummary {
  operation: string;
  collection: string | null;
}

/**
 * What a statement does, from its text: its first keyword and the first table it names. A WITH
 * that writes is named by its write; one that only reads, as a SELECT.
 */
export function summarize(text: string): StatementSummary {
  let operation = OPERATION.exec(text)?.[1]?.toUpperCase() ?? "UNKNOWN";
  if (operation === "WITH") {
    const write = WRITE_IN_WITH.exec(text)?.[1]?.split(/\s/)[0]?.toUpperCase();
    operation = write ?? "SELECT";
  }
  const target = TARGETS[operation]?.exec(text)?.[1]?.replaceAll('"', "") ?? null;
  return { operation, collection: target };
}

/** Summaries by statement text: the services send a few hundred distinct texts. */
const summaries = new Map<string, StatementSummary>();
const SUMMARIES_KEPT = 2_000;

function summaryOf(text: string): StatementSummary {
  let summary = summaries.get(text);
  if (summary === undefined) {
    if (summaries.size >= SUMMARIES_KEPT) summaries.clear();
    summary = summarize(text);
    summaries.set(text, summary);
  }
  return summary;
}

function finish(span: Span, query: DriverQuery, error?: unknown): void {
  const { operation, collection } = summaryOf(query.string ?? "");
  const name = collection ? `${operation} ${collection}` : operation;
  span.updateName(name);
  span.setAttribute("db.operation.name", operation);
  span.setAttribute("db.query.summary", name);
  if (collection) span.setAttribute("db.collection.name", collection);
  if (error !== undefined) {
    const code = (error as { code?: unknown }).code;
    const type = typeof code === "string" ? code : "_OTHER";
    span.setAttribute("error.type", type);
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) {
      span.setAttribute("db.response.status_code", code);
    }
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

let installed = false;

/**
 * Installs the statement spans for every pool of the process, once, when an SDK is registered
 * (`pool` gives the driver's query prototype; nothing is sent). `database` is `db.namespace`.
 */
export function traceStatements(pool: postgres.Sql, database: string): void {
  if (installed || !tracing()) return;
  installed = true;
  const prototype = Object.getPrototypeOf(pool`SELECT 1`) as DriverQuery;
  const handle = prototype.handle;
  prototype.handle = function (this: DriverQuery): Promise<void> {
    // A statement is traced inside a recorded trace only: alone (a loop's poll) it would be a
    // trace of its own, and in a trace the sampler dropped a span built for nothing.
    if (!this.executed && inRecordedTrace()) watch(this, database);
    return handle.call(this);
  };
}

/**
 * Starts the statement's span and ends it when the driver settles the query. A cursor's query has
 * `resolve` assigned again as it moves on (Query.cursor), so for it both settle functions become
 * accessors that wrap whatever is assigned; any other is wrapped once.
 */
function watch(query: DriverQuery, database: string): void {
  const span = tracer.startSpan("postgresql", {
    kind: SpanKind.CLIENT,
    attributes: { "db.system.name": "postgresql", "db.namespace": database },
  });
  let ended = false;
  const end = (error?: unknown): void => {
    if (ended) return;
    ended = true;
    finish(span, query, error);
  };
  let resolve = query.resolve;
  let reject = query.reject;
  if (query.cursorFn === undefined) {
    query.resolve = (value: unknown) => (end(), resolve(value));
    query.reject = (error: unknown) => (end(error), reject(error));
    return;
  }
  Object.defineProperty(query, "resolve", {
    configurable: true,
    get: () => (value: unknown) => (end(), resolve(value)),
    set: (next: (value: unknown) => void) => resolve = next,
  });
  Object.defineProperty(query, "reject", {
    configurable: true,
    get: () => (error: unknown) => (end(error), reject(error)),
    set: (next: (error: unknown) => void) => reject = next,
  });
}
