/**
 * Reading PostgreSQL's plans, for the services' plans_test.ts. Each of those seeds its tables with
 * many organisations' rows, runs its own statements as the service does (the runtime role, in a
 * transaction that names one organisation, or the platform's) and fails on a plan that reads a
 * table whole: under the row-level policies, an operator that is not leakproof (ILIKE, say) can
 * quietly cost a statement its index. What the tests share is here: the shape of EXPLAIN (FORMAT
 * JSON), the walks over it, the transaction a plan is read in and a pool that records what it
 * sends. Which statements, which tables and which indexes each test expects stay in its file.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import {
  connect,
  type Fragment,
  platformTransaction,
  type Queryable,
  type Sql,
  transaction,
  type TransactionSql,
} from "../db/mod.ts";
import { ORGANIZATION_SETTING, ROLES, roleUrl, withOrganization } from "../db/tenancy.ts";

/** One node of a plan as EXPLAIN (FORMAT JSON) gives it, as far as the plan checks read it. */
export interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Index Cond"?: string;
  /** How the node serves its parent: "InitPlan" for a value worked out once, before the rest. */
  "Parent Relationship"?: string;
  /** With ANALYZE and BUFFERS: the blocks a node read, from the cache and from disk. */
  "Shared Hit Blocks"?: number;
  "Shared Read Blocks"?: number;
  Plans?: PlanNode[];
}

/** A row of EXPLAIN (FORMAT JSON)'s answer: the type to run an EXPLAIN with. */
export interface ExplainRow {
  "QUERY PLAN": { Plan: PlanNode }[];
}

/** The plan in an EXPLAIN (FORMAT JSON) answer: it is one row holding a list of one plan. */
export function planIn(rows: readonly ExplainRow[]): PlanNode {
  const plan = rows[0]?.["QUERY PLAN"][0]?.Plan;
  assert(plan, `EXPLAIN answered no plan: ${JSON.stringify(rows)}`);
  return plan;
}

/** Every node of a plan, depth first: what a check looks for may stand at any depth. */
export function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

/**
 * The index names in a subtree: a Bitmap Heap Scan's come from the Bitmap Index Scans under it,
 * which name no relation, so an index is looked for in the whole subtree.
 */
export function indexesUnder(node: PlanNode): string[] {
  return nodesOf(node).flatMap((n) => n["Index Name"] === undefined ? [] : [n["Index Name"]]);
}

/** The nodes of a plan that read `table`, by any means: a check that the table is read at all. */
export function readsOf(plan: PlanNode, table: string): PlanNode[] {
  return nodesOf(plan).filter((n) => n["Relation Name"] === table);
}

/**
 * The nodes of a plan that read one of `tables` whole (a Seq Scan): on a table of many
 * organisations' rows, the plan that lost its index to the policies.
 */
export function seqScansOf(plan: PlanNode, tables: Iterable<string>): PlanNode[] {
  const names = new Set(tables);
  return nodesOf(plan).filter((n) =>
    n["Node Type"] === "Seq Scan" && names.has(n["Relation Name"] ?? "")
  );
}

/** Fails when the plan reads one of `tables` whole, and shows the plan: the usual check. */
export function assertNoSeqScan(plan: PlanNode, tables: Iterable<string>, what: string): void {
  assert.deepStrictEqual(
    seqScansOf(plan, tables),
    [],
    `${what} reads a table whole: ${JSON.stringify(plan)}`,
  );
}

/** A table read by a plan: how, and through which indexes (none for a Seq Scan). */
export interface Scan {
  type: string;
  table: string;
  indexes: string[];
}

/**
 * Every table a plan reads, each with the indexes it is read through, for checks of which index
 * serves a table (an UPDATE's ModifyTable names the table it writes; the scans under it read).
 */
export function scansOf(node: PlanNode): Scan[] {
  if (node["Relation Name"] !== undefined && node["Node Type"].endsWith("Scan")) {
    const table = node["Relation Name"];
    return [{ type: node["Node Type"], table, indexes: indexesUnder(node) }];
  }
  return (node.Plans ?? []).flatMap(scansOf);
}

/** The plan as a short tree, each node with what it reads and through which index: for messages. */
export function outline(node: PlanNode, depth = 0): string {
  const parts = [
    node["Node Type"],
    node["Relation Name"] ? `on ${node["Relation Name"]}` : "",
    node["Index Name"] ? `using ${node["Index Name"]}` : "",
    node["Index Cond"] ? `[${node["Index Cond"]}]` : "",
  ].filter(Boolean);
  return [
    `${"  ".repeat(depth)}${parts.join(" ")}`,
    ...(node.Plans ?? []).map((child) => outline(child, depth + 1)),
  ].join("\n");
}

/**
 * Whom a statement runs for: one organisation (the policies show it that organisation's rows) or
 * the platform (its few reads across organisations). A plan is only worth checking as run so.
 */
export type PlanScope = { organizationId: string } | { platform: true };

/**
 * Runs `fn` in the transaction the service would run a statement in for `scope`, on `sql` (a pool
 * of the runtime role): the organisation's, named to the policies, or the platform's.
 */
export async function scopedTransaction<T>(
  sql: Sql,
  scope: PlanScope,
  fn: (tx: TransactionSql) => Promise<T>,
): Promise<T> {
  return "platform" in scope
    ? await platformTransaction(sql, fn)
    : await withOrganization(scope.organizationId, () => transaction(sql, fn));
}

/** A statement as a pool sent it: its text, its values and the types they were sent as. */
export interface Sent {
  text: string;
  parameters: unknown[];
  types: number[];
}

/**
 * The plan of a statement as the service would run it for `scope`: a statement built on the
 * transaction, or one a recording pool saw go out, EXPLAINed with the values it was sent with.
 */
export async function planFor(
  sql: Sql,
  scope: PlanScope,
  statement: ((q: Queryable) => Fragment) | Pick<Sent, "text" | "parameters">,
): Promise<PlanNode> {
  return await scopedTransaction(sql, scope, async (tx) =>
    planIn(
      typeof statement === "function"
        ? await tx<ExplainRow[]>`EXPLAIN (FORMAT JSON) ${statement(tx)}`
        : await tx.unsafe<ExplainRow[]>(
          `EXPLAIN (FORMAT JSON) ${statement.text}`,
          statement.parameters as postgres.ParameterOrJSON<never>[],
        ),
    ));
}

/** A pool of the runtime role and every statement it has sent, oldest first. */
export interface RecordingPool {
  sql: Sql;
  sent: Sent[];
}

/**
 * A pool of the runtime role (printshop_app) on the test database at `databaseUrl` (the
 * superuser's), as a service opens its own on `schema`, that keeps every statement it sends with
 * its values: what the store functions send is then EXPLAINed as they sent it. Dates stay
 * `YYYY-MM-DD` strings, as on the services' pools. The caller ends it.
 */
export function recordingPool(
  databaseUrl: string,
  schema: string,
  options: { max: number },
): RecordingPool {
  const password = decodeURIComponent(new URL(databaseUrl).password);
  const sent: Sent[] = [];
  const sql = connect(roleUrl(databaseUrl, ROLES.app, password), {
    schema,
    max: options.max,
    onQuery: (text, parameters, types) => {
      sent.push({ text, parameters: [...parameters], types: [...types] as number[] });
    },
  });
  return { sql, sent };
}

/**
 * The plans of the statements a search function (`<table>_matching`, README "Search") runs when
 * asked for `term` for `organizationId`, as PostgreSQL's auto_explain reports them: a function's
 * statements do not show in the EXPLAIN of the list that calls it. On a connection of the test
 * database's superuser (`databaseUrl`; loading auto_explain needs one), with the schema's search
 * path; the function runs as its owner all the same, so its plans are the service's. `analyze`:
 * the statements are run with ANALYZE and BUFFERS, so each node says what it read.
 */
export async function searchPlans(
  databaseUrl: string,
  schema: string,
  organizationId: string,
  fn: string,
  term: string,
  { analyze = false }: { analyze?: boolean } = {},
): Promise<PlanNode[]> {
  const notices: string[] = [];
  const admin = postgres(databaseUrl, {
    max: 1,
    onnotice: (notice) => notices.push(String(notice.message)),
    connection: { search_path: schema },
  });
  try {
    await admin.begin(async (tx) => {
      // The organisation for the rest of the transaction, then one call before it is explained: a
      // new connection's first call also reads the catalogue (what a plan's blocks would then
      // count), and the function's plpgsql helpers plan theirs.
      await tx`SELECT set_config(${ORGANIZATION_SETTING}, ${organizationId}, true)`;
      await tx`SELECT ${tx.unsafe(fn)}(${`%${term}%`})`;
      await tx.unsafe(`LOAD 'auto_explain'`);
      const settings: [string, string][] = [
        ["auto_explain.log_min_duration", "0"],
        ["auto_explain.log_nested_statements", "on"],
        ["auto_explain.log_format", "json"],
        ["auto_explain.log_level", "notice"],
        ["auto_explain.log_analyze", String(analyze)],
        ["auto_explain.log_buffers", String(analyze)],
      ];
      for (const [name, value] of settings) await tx`SELECT set_config(${name}, ${value}, true)`;
      await tx`SELECT ${tx.unsafe(fn)}(${`%${term}%`})`;
    });
  } finally {
    await admin.end();
  }
  // Each notice is "duration: … ms  plan:\n" and the plan's JSON; the last is the call's own.
  const plans = notices.filter((n) => n.includes("plan:")).map((n) =>
    (JSON.parse(n.slice(n.indexOf("{"))) as { Plan: PlanNode }).Plan
  );
  assert(plans.length >= 2, `${fn} reported no plans of its own: ${notices.join("\n")}`);
  return plans.slice(0, -1);
}

/**
 * Fails unless `plans` read `table` through `index`, and read it through nothing else but the
 * `others` (a key another table leads to): a search function that lost its trigram index reads
 * the table through another, or whole.
 */
export function assertReadsThrough(
  plans: readonly PlanNode[],
  table: string,
  index: string,
  what: string,
  others: readonly string[] = [],
): void {
  const scans = plans.flatMap(scansOf).filter((s) => s.table === table);
  const shown = plans.map((p) => outline(p)).join("\n");
  assert(
    scans.some((s) => s.indexes.includes(index)),
    `${what}: ${table} not read through ${index}\n${shown}`,
  );
  for (const scan of scans) {
    assert(
      scan.indexes.some((i) => i === index || others.includes(i)),
      `${what}: ${table} is read by ${scan.type} through [${scan.indexes}]\n${shown}`,
    );
  }
}

/** A search function to check, and what it is checked with (assertSearchFunction). */
export interface SearchFunctionCheck {
  /** The function, `<table>_matching`, its table and the trigram index it reads. */
  fn: string;
  table: string;
  index: string;
  /** Keys another table leads the function to (the client's quotes, say): reads allowed too. */
  others?: readonly string[];
  /**
   * Terms each held by exactly one row of `big` and one of `other` (one per searched column, so
   * each column is shown to be searched); the first one's plan is checked.
   */
  terms: readonly string[];
  /**
   * False for a table declared with a query of more ids (`also`), which is never walked
   * (platform migration 0005): its `_is_common` must then say no to any term.
   */
  walked?: false;
}

/**
 * Checks a search function (README "Search") as the service calls it, on the runtime role's pool
 * `sql`: each term finds exactly the one row of the organisation in force (`big`, then `other`,
 * which hold rows of the same text), none with no organisation in force, and none when asked
 * for `big` while `other` is in force; and for the first term, in `big` (a shop whose rows are
 * dear to read whole, ANALYZEd), it reads its trigram index.
 */
export async function assertSearchFunction(
  h: { sql: Sql; databaseUrl: string; deps: { sql: Sql } },
  schema: string,
  { big, other }: { big: string; other: string },
  check: SearchFunctionCheck,
): Promise<void> {
  const { fn, table, index, terms, others = [], walked = true } = check;
  const ids = async (organizationId: string | undefined, term: string, asked?: string) => {
    const call = (q: Queryable) =>
      asked === undefined
        ? q<{ id: string }[]>`SELECT id FROM ${q.unsafe(fn)}(${`%${term}%`}) AS m (id)`
        : q<{ id: string }[]>`SELECT id FROM ${q.unsafe(fn)}(${`%${term}%`}, ${asked}) AS m (id)`;
    const rows = organizationId === undefined
      ? await call(h.deps.sql)
      : await withOrganization(organizationId, () => transaction(h.deps.sql, call));
    return rows.map((r) => r.id);
  };
  for (const term of terms) {
    for (const organizationId of [big, other]) {
      const found = await ids(organizationId, term);
      assert.equal(found.length, 1, `${fn}("${term}") for one shop: ${found.length} rows`);
      const [row] = await h.sql<{ organization_id: string }[]>`
        SELECT organization_id FROM ${h.sql(schema)}.${h.sql(table)} WHERE id = ${found[0]!}`;
      assert.equal(row?.organization_id, organizationId, `${fn}("${term}"): the shop's own row`);
    }
    assert.deepStrictEqual(await ids(undefined, term), [], `${fn}: no shop in force, no rows`);
    assert.deepStrictEqual(await ids(other, term, big), [], `${fn}: another shop's, no rows`);
    // The walk's check (platform migration 0005): of ids it is given, only the matching rows of
    // the shop in force, whatever else is in the list.
    if (!walked) {
      const [never] = await withOrganization(
        big,
        () =>
          transaction(h.deps.sql, (q) =>
            q<{ common: boolean }[]>`
            SELECT ${q.unsafe(`${fn}_is_common`)}(${`%${term}%`}, 0) AS common`),
      );
      assert.equal(never?.common, false, `${fn}_is_common: never walked`);
      continue;
    }
    const mine = (await ids(big, term))[0]!;
    const theirs = (await ids(other, term))[0]!;
    const among = async (organizationId: string | undefined, given: string[], asked?: string) => {
      const call = (q: Queryable) =>
        asked === undefined
          ? q<{ id: string }[]>`
            SELECT id FROM ${q.unsafe(`${fn}_among`)}(${`%${term}%`}, ${given}::uuid[]) AS m (id)`
          : q<{ id: string }[]>`
            SELECT id FROM ${q.unsafe(`${fn}_among`)}(${`%${term}%`}, ${given}::uuid[], ${asked})
              AS m (id)`;
      const rows = organizationId === undefined
        ? await call(h.deps.sql)
        : await withOrganization(organizationId, () => transaction(h.deps.sql, call));
      return rows.map((r) => r.id);
    };
    const stranger = crypto.randomUUID();
    assert.deepStrictEqual(await among(big, [theirs, mine, stranger]), [mine], `${fn}_among`);
    assert.deepStrictEqual(await among(other, [mine, theirs]), [theirs], `${fn}_among, other`);
    assert.deepStrictEqual(await among(big, [theirs]), [], `${fn}_among: not the other shop's`);
    assert.deepStrictEqual(await among(undefined, [mine, theirs]), [], `${fn}_among: no shop`);
    assert.deepStrictEqual(await among(other, [mine], big), [], `${fn}_among: asked for another`);
  }
  const plans = await searchPlans(h.databaseUrl, schema, big, fn, terms[0]!);
  assertReadsThrough(plans, table, index, fn, others);
}
