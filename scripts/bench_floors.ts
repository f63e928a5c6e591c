/**
 * The floors of issue 15: what this machine does, in the same run and on the same PostgreSQL
 * server as the bench stack, for the work a product request cannot avoid. scripts/bench_ratios.ts
 * measures the product against them.
 *
 * Two child processes, started by `startFloors()` and stopped (and their tables dropped) by its
 * `stop()`:
 *
 * - the naive proxy: a bare `Deno.serve` that forwards every request with `fetch` to the floor
 *   service and answers what it got. It is the hop every floor pays, as the gateway's hop is paid
 *   by the product;
 * - the floor service: a bare `Deno.serve` with postgres.js (the product's own pool settings,
 *   `connect()` from shared/db: 10 connections) and these handlers, each a few lines:
 *   - `GET /json`: the proxy floor, a small fixed JSON;
 *   - `POST /write/<organizationId>` `{ "reference": "…" }`: the write floor, ONE transaction
 *     per request: insert a row into a table shaped like `quotes.quotes` (its indexes and
 *     constraints too; the number from a sequence, so writers never wait on each other), insert
 *     an outbox row into a table shaped like the platform outbox, `pg_notify`;
 *   - `GET /read/<organizationId>`: the read floor, 20 rows by (organization_id, created_at, id)
 *     and a `count(*)` of the organisation's rows, as JSON; its table is a copy of the product's
 *     `quotes` rows for that organisation, made by `syncReadFloor()` just before measuring, so
 *     both read the same number of rows of the same width;
 *   - `POST /write-first/<organizationId>` and `GET /read-first/<organizationId>`: the same
 *     two floors on tables as issue 15 first defined them (the same columns and defaults, only
 *     the primary key and one `(organization_id, created_at, id)` index), which issue 32 has the
 *     ratios printed against as well, so what the product's other indexes cost stays in view;
 *   - `GET /one/<id>`: the single-row floor, one stored JSON document (a full quote as the API
 *     answered it, stored by `storeDocument()`) read by id and answered.
 *
 * Why child processes rather than handlers in the bench process: the product runs the gateway
 * and each service in a process of its own, so each hop crosses processes, each process has its
 * own event loop and garbage collector, and the load generator (in the bench process) does not
 * share an event loop with what it measures. The floors get the same shape, proxy process →
 * service process → PostgreSQL, so the only difference left is what the product does per
 * request. Run as `deno run … scripts/bench_floors.ts proxy|service` by `startFloors()`.
 *
 * The floor tables live in their own schema, `bench_floors`, in the stack's database (never in a
 * service's schema), dropped at the end. Nobody LISTENs on the floor's channel; the product's
 * relays listen on theirs, and that wake-up is part of what the product pays.
 */
import { RUN_FLAGS } from "@printshop/shared/launcher";
import { freePort, sleep } from "@printshop/shared/net";

/** The schema the floor tables live in, on the stack's database. */
export const FLOOR_SCHEMA = "bench_floors";
const NOTIFY_CHANNEL = "bench_floors";
/** The fixed answer of the proxy floor, about the size of a small gateway answer. */
const FIXED_JSON = JSON.stringify({
  status: "ok",
  data: { service: "bench-floor", version: "1", ready: true },
});
const READY_TIMEOUT_MS = 30_000;
/** The write floor's tables by route: the product's indexes, and as first defined. */
const WRITE_TABLES: Record<string, string> = { write: "written", "write-first": "written_first" };
/** The read floor's tables by route, likewise. */
const READ_TABLES_BY_ROUTE: Record<string, string> = {
  read: "quotes",
  "read-first": "quotes_first",
};
const READ_TABLES = Object.values(READ_TABLES_BY_ROUTE);

export interface FloorProcess {
  name: "floor-proxy" | "floor-service";
  pid: number;
  url: string;
}

export interface Floors {
  /** The naive proxy; every floor URL below goes through it. */
  proxyUrl: string;
  /** The floor service itself, without the proxy (for context only). */
  serviceUrl: string;
  processes: FloorProcess[];
  urls: {
    json: string;
    write: (organizationId: string) => string;
    read: (organizationId: string) => string;
    /** The write and read floors on tables as first defined: primary key and one index. */
    writeFirst: (organizationId: string) => string;
    readFirst: (organizationId: string) => string;
    one: (id: string) => string;
  };
  /**
   * Makes the read floors' tables (the product's indexes, and as first defined) exact copies of
   * the product's `quotes` rows of one organisation, then VACUUM ANALYZEs them and the product's
   * table alike, so all are read in the same state. Answers the number of rows.
   */
  syncReadFloor(organizationId: string): Promise<number>;
  /** Stores one JSON document for the single-row floor; answers its id. */
  storeDocument(organizationId: string, json: string): Promise<string>;
  /** Stops both processes and drops the floor schema. */
  stop(): Promise<void>;
}

async function setUpSchema(databaseUrl: string): Promise<void> {
  const { connect } = await import("@printshop/shared/db");
  const sql = connect(databaseUrl, { schema: FLOOR_SCHEMA, max: 1, applicationName: "bench" });
  try {
    // LIKE … INCLUDING ALL: the same columns, defaults and constraints as the product's tables;
    // the quotes table's indexes are copied after (floorIndexes), so the floor maintains the same
    // indexes per row.
    await sql.unsafe(`
      DROP SCHEMA IF EXISTS ${FLOOR_SCHEMA} CASCADE;
      CREATE SCHEMA ${FLOOR_SCHEMA};
      CREATE TABLE ${FLOOR_SCHEMA}.written (LIKE quotes.quotes INCLUDING ALL EXCLUDING INDEXES);
      CREATE SEQUENCE ${FLOOR_SCHEMA}.numbers;
      CREATE TABLE ${FLOOR_SCHEMA}.outbox (LIKE quotes.outbox INCLUDING ALL);
      CREATE TABLE ${FLOOR_SCHEMA}.quotes (LIKE quotes.quotes INCLUDING ALL EXCLUDING INDEXES);
      -- The floors as issue 15 first defined them (issue 32 prints the ratios against these
      -- too): the same columns and defaults, only the primary key and one index.
      CREATE TABLE ${FLOOR_SCHEMA}.written_first (LIKE quotes.quotes INCLUDING DEFAULTS);
      CREATE TABLE ${FLOOR_SCHEMA}.quotes_first (LIKE quotes.quotes INCLUDING DEFAULTS);
      ALTER TABLE ${FLOOR_SCHEMA}.written_first ADD PRIMARY KEY (id);
      ALTER TABLE ${FLOOR_SCHEMA}.quotes_first ADD PRIMARY KEY (id);
      CREATE INDEX ON ${FLOOR_SCHEMA}.written_first (organization_id, created_at, id);
      CREATE INDEX ON ${FLOOR_SCHEMA}.quotes_first (organization_id, created_at, id);
      CREATE TABLE ${FLOOR_SCHEMA}.documents (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL,
        body jsonb NOT NULL
      );
    `);
    const indexes = await sql<{ definition: string }[]>`
      SELECT pg_get_indexdef(indexrelid) AS definition FROM pg_index
      WHERE indrelid = 'quotes.quotes'::regclass`;
    for (const table of ["written", "quotes"]) {
      for (const statement of floorIndexes(indexes.map((i) => i.definition), table)) {
        await sql.unsafe(statement);
      }
    }
  } finally {
    await sql.end();
  }
}

/**
 * The statements giving the floor table `table` (in FLOOR_SCHEMA, shaped like `quotes.quotes`)
 * the product's quotes indexes, from their definitions (pg_get_indexdef): each index unnamed, on
 * the floor's table. The search index is written over the quote's columns (platform migration
 * 0007), so it copies as it is; an index over the whole row (`(quotes.*)`), which the product no
 * longer has (e2e/index_inventory_test.ts), would be the floor's own function, and is refused.
 */
export function floorIndexes(definitions: readonly string[], table: string): string[] {
  return definitions.map((definition) => {
    const head = /^CREATE (UNIQUE )?INDEX \S+ ON (ONLY )?quotes\.quotes /;
    if (!head.test(definition) || definition.includes("(quotes.*)")) {
      throw new Error(`the floor cannot copy the product's index: ${definition}`);
    }
    return definition.replace(head, `CREATE $1INDEX ON ${FLOOR_SCHEMA}.${table} `);
  });
}

async function waitReady(url: string, child: Deno.ChildProcess, what: string): Promise<void> {
  let exited = false;
  child.status.then(() => exited = true);
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`${what} exited during start`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await res.body?.cancel();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  throw new Error(`${what} did not answer ${url} within ${READY_TIMEOUT_MS} ms`);
}

function spawnRole(role: "proxy" | "service", env: Record<string, string>): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...RUN_FLAGS, new URL(import.meta.url).pathname, role],
    cwd: new URL("../", import.meta.url).pathname,
    env,
    // The child exits when this pipe closes, so a bench killed outright leaves no floor behind.
    stdin: "piped",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
}

/** Starts the floor service and the naive proxy in front of it, on `databaseUrl`. */
export async function startFloors(options: { databaseUrl: string }): Promise<Floors> {
  await setUpSchema(options.databaseUrl);
  const { connect } = await import("@printshop/shared/db");
  const sql = connect(options.databaseUrl, {
    schema: FLOOR_SCHEMA,
    max: 1,
    applicationName: "bench",
  });
  const children: Deno.ChildProcess[] = [];
  const stop = async (): Promise<void> => {
    for (const child of children) {
      await child.stdin.close().catch(() => {});
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* already gone */ }
      }, 5_000);
      await child.status;
      clearTimeout(timer);
    }
    await sql.unsafe(`DROP SCHEMA IF EXISTS ${FLOOR_SCHEMA} CASCADE`).catch(() => {});
    await sql.end();
  };
  try {
    const servicePort = freePort();
    const proxyPort = freePort();
    const serviceUrl = `http://127.0.0.1:${servicePort}`;
    const proxyUrl = `http://127.0.0.1:${proxyPort}`;
    const service = spawnRole("service", {
      PORT: String(servicePort),
      DATABASE_URL: options.databaseUrl,
    });
    children.push(service);
    await waitReady(`${serviceUrl}/json`, service, "the floor service");
    const proxy = spawnRole("proxy", { PORT: String(proxyPort), TARGET: serviceUrl });
    children.push(proxy);
    await waitReady(`${proxyUrl}/json`, proxy, "the naive proxy");
    return {
      proxyUrl,
      serviceUrl,
      processes: [
        { name: "floor-proxy", pid: proxy.pid, url: proxyUrl },
        { name: "floor-service", pid: service.pid, url: serviceUrl },
      ],
      urls: {
        json: `${proxyUrl}/json`,
        write: (organizationId) => `${proxyUrl}/write/${organizationId}`,
        read: (organizationId) => `${proxyUrl}/read/${organizationId}`,
        writeFirst: (organizationId) => `${proxyUrl}/write-first/${organizationId}`,
        readFirst: (organizationId) => `${proxyUrl}/read-first/${organizationId}`,
        one: (id) => `${proxyUrl}/one/${id}`,
      },
      async syncReadFloor(organizationId) {
        await sql.begin(async (tx) => {
          for (const table of READ_TABLES) {
            await tx`TRUNCATE ${tx(table)}`;
            await tx`
              INSERT INTO ${tx(table)} SELECT * FROM quotes.quotes
              WHERE organization_id = ${organizationId}`;
          }
        });
        for (const table of READ_TABLES) {
          await sql.unsafe(`VACUUM ANALYZE ${FLOOR_SCHEMA}.${table}`);
        }
        await sql.unsafe(`VACUUM ANALYZE quotes.quotes`);
        const [row] = await sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM quotes WHERE organization_id = ${organizationId}`;
        return row!.n;
      },
      async storeDocument(organizationId, json) {
        const id = crypto.randomUUID();
        await sql`
          INSERT INTO documents (id, organization_id, body)
          VALUES (${id}, ${organizationId}, ${json}::jsonb)`;
        await sql.unsafe(`VACUUM ANALYZE ${FLOOR_SCHEMA}.documents`);
        return id;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Exits when the parent closes stdin (or dies), so no floor outlives its bench. */
function exitWithParent(): void {
  (async () => {
    try {
      for await (const _ of Deno.stdin.readable) { /* the parent never writes */ }
    } finally {
      Deno.exit(0);
    }
  })();
}

/** The naive proxy: every request forwarded with fetch, the answer passed back as it came. */
function runProxy(): void {
  const port = Number(Deno.env.get("PORT"));
  const target = Deno.env.get("TARGET")!;
  Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, (req) => {
    const url = new URL(req.url);
    return fetch(`${target}${url.pathname}${url.search}`, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      redirect: "manual",
    });
  });
}

/** The floor service: the bare handlers described at the top of this file. */
async function runService(): Promise<void> {
  const { connect } = await import("@printshop/shared/db");
  const { uuidv7 } = await import("@printshop/shared/ids");
  const port = Number(Deno.env.get("PORT"));
  const sql = connect(Deno.env.get("DATABASE_URL")!, {
    schema: FLOOR_SCHEMA,
    applicationName: "bench_floors",
  });
  const json = (body: string, status = 200): Response =>
    new Response(body, { status, headers: { "content-type": "application/json" } });
  Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, async (req) => {
    const [, route, param] = new URL(req.url).pathname.split("/");
    if (req.method === "GET" && route === "json") return json(FIXED_JSON);
    const written = WRITE_TABLES[route ?? ""];
    if (req.method === "POST" && written && param) {
      const { reference } = await req.json() as { reference?: string };
      const id = uuidv7();
      const row = await sql.begin(async (tx) => {
        const [inserted] = await tx<{ quote_ref: string; created_at: Date }[]>`
          INSERT INTO ${tx(written)} (id, organization_id, quote_number, quote_ref, reference)
          SELECT ${id}, ${param}, n, 'Q-' || n, ${reference ?? null}
          FROM nextval('numbers') AS n
          RETURNING quote_ref, created_at`;
        await tx`
          INSERT INTO outbox (id, organization_id, type, aggregate_id, payload)
          VALUES (${uuidv7()}, ${param}, 'floor.written', ${id},
                  ${tx.json({ id, reference: reference ?? null, quoteRef: inserted!.quote_ref })})`;
        await tx`SELECT pg_notify(${NOTIFY_CHANNEL}, ${param})`;
        return inserted!;
      });
      return json(JSON.stringify({ status: "ok", data: { id, reference, ...row } }), 201);
    }
    const read = READ_TABLES_BY_ROUTE[route ?? ""];
    if (req.method === "GET" && read && param) {
      const [items, [count]] = await Promise.all([
        sql`
          SELECT * FROM ${sql(read)} WHERE organization_id = ${param}
          ORDER BY created_at, id LIMIT 20`,
        sql<
          { n: number }[]
        >`SELECT count(*)::int AS n FROM ${sql(read)} WHERE organization_id = ${param}`,
      ]);
      return json(JSON.stringify({ status: "ok", data: { items, totalCount: count!.n } }));
    }
    if (req.method === "GET" && route === "one" && param) {
      const [row] = await sql<{ body: string }[]>`
        SELECT body::text AS body FROM documents WHERE id = ${param}`;
      if (!row) return json(`{"status":"error"}`, 404);
      return json(`{"status":"ok","data":${row.body}}`);
    }
    return json(`{"status":"error"}`, 404);
  });
}

if (import.meta.main) {
  exitWithParent();
  const role = Deno.args[0];
  if (role === "proxy") runProxy();
  else if (role === "service") await runService();
  else {
    console.error("usage: bench_floors.ts proxy|service (started by startFloors())");
    Deno.exit(2);
  }
}
