import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type postgres from "postgres";
import { createTestDatabase, tcpRelay } from "@printshop/shared/testing";
import {
  allSent,
  behind,
  connect,
  isDatabaseUnavailable,
  migrate,
  type Migration,
  openDatabase,
  type Queryable,
  read,
  readMigrations,
  sendBeforeCommit,
  type Sql,
  transaction,
  type TransactionSql,
  withOrganization,
} from "./mod.ts";
import { ORGANIZATION_SETTING } from "./tenancy.ts";

/** A temporary folder holding the given files, as a directory URL (trailing slash). */
async function migrationDir(files: Record<string, string>): Promise<{ url: URL; path: string }> {
  const path = await Deno.makeTempDir({ prefix: "printshop-migrations-" });
  for (const [name, text] of Object.entries(files)) {
    await Deno.writeTextFile(join(path, name), text);
  }
  return { url: pathToFileURL(`${path}/`), path };
}

async function withMigrationDir(
  files: Record<string, string>,
  fn: (url: URL) => Promise<void>,
): Promise<void> {
  const dir = await migrationDir(files);
  try {
    await fn(dir.url);
  } finally {
    await Deno.remove(dir.path, { recursive: true });
  }
}

Deno.test("readMigrations() reads NNNN_name.sql files in version order", async () => {
  await withMigrationDir({
    "0002_second.sql": "SELECT 2;",
    "0001_first.sql": "SELECT 1;",
    "0003_third_one.sql": "SELECT 3;",
    "README.md": "not a migration",
  }, async (url) => {
    const migrations = await readMigrations(url);
    assert.deepEqual(migrations, [
      { version: 1, name: "first", sql: "SELECT 1;" },
      { version: 2, name: "second", sql: "SELECT 2;" },
      { version: 3, name: "third_one", sql: "SELECT 3;" },
    ]);
  });
});

Deno.test("readMigrations() reads the folder it is given, with or without a trailing slash", async () => {
  // The folder is listed from `dir`, so its files must be read from `dir` too, not from its
  // parent (a URL without a trailing slash resolves names against the parent folder).
  const parent = await Deno.makeTempDir({ prefix: "printshop-migrations-parent-" });
  try {
    await Deno.mkdir(join(parent, "migrations"));
    await Deno.writeTextFile(join(parent, "migrations", "0001_init.sql"), "SELECT 'right';");
    await Deno.writeTextFile(join(parent, "0001_init.sql"), "SELECT 'wrong file';");
    const withSlash = await readMigrations(pathToFileURL(join(parent, "migrations") + "/"));
    assert.equal(withSlash[0]?.sql, "SELECT 'right';");
    const withoutSlash = await readMigrations(pathToFileURL(join(parent, "migrations")));
    assert.equal(withoutSlash[0]?.sql, "SELECT 'right';");
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("readMigrations() refuses a badly named file and names it", async (t) => {
  for (const bad of ["1_init.sql", "0002-init.sql", "0002_Init.sql", "0002_.sql", "00002_x.sql"]) {
    await t.step(bad, async () => {
      await withMigrationDir({ "0001_init.sql": "SELECT 1;", [bad]: "SELECT 2;" }, async (url) => {
        await assert.rejects(
          () => readMigrations(url),
          (error: Error) =>
            error.message.includes(`"${bad}"`) && /NNNN_name\.sql/.test(error.message),
        );
      });
    });
  }
});

Deno.test("readMigrations() refuses a numbering gap, a duplicate and a missing first file", async (t) => {
  const cases: Record<string, Record<string, string>> = {
    "a gap": { "0001_a.sql": "", "0003_c.sql": "" },
    "a duplicate version": { "0001_a.sql": "", "0001_b.sql": "", "0002_c.sql": "" },
    "no 0001": { "0002_b.sql": "", "0003_c.sql": "" },
    "a 0000": { "0000_zero.sql": "", "0001_a.sql": "" },
  };
  for (const [name, files] of Object.entries(cases)) {
    await t.step(name, async () => {
      await withMigrationDir(files, async (url) => {
        await assert.rejects(() => readMigrations(url), /Migrations must be numbered 0001, 0002/);
      });
    });
  }
});

// ---------------------------------------------------------------------------------------------

const COUNTER_MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: "create",
    // Not IF NOT EXISTS: running this file twice fails.
    sql: `CREATE TABLE widgets (id integer PRIMARY KEY);
          CREATE TABLE runs (migration integer NOT NULL);
          INSERT INTO runs VALUES (1);`,
  },
  {
    version: 2,
    name: "more",
    sql: `CREATE TABLE gadgets (id integer PRIMARY KEY);
          INSERT INTO runs VALUES (2);`,
  },
];

Deno.test("migrate() applies each file once, records it, and is a no-op the second time", async () => {
  const db = await createTestDatabase();
  const sql = connect(db.url, { schema: "app", max: 2 });
  try {
    assert.deepEqual(await migrate(sql, "app", COUNTER_MIGRATIONS), [1, 2]);
    const recorded = await sql<{ version: number; name: string }[]>`
      SELECT version, name FROM app.schema_migrations ORDER BY version`;
    assert.deepEqual(recorded.map((r) => ({ ...r })), [
      { version: 1, name: "create" },
      { version: 2, name: "more" },
    ]);
    // Unqualified names in a migration land in the schema it was run for.
    const tables = await sql<{ table_name: string }[]>`
      SELECT table_name FROM information_schema.tables WHERE table_schema = 'app'
      ORDER BY table_name`;
    assert.deepEqual(tables.map((r) => r.table_name), [
      "gadgets",
      "runs",
      "schema_migrations",
      "widgets",
    ]);

    assert.deepEqual(await migrate(sql, "app", COUNTER_MIGRATIONS), []);
    const runs = await sql<{ migration: number }[]>`SELECT migration FROM app.runs ORDER BY 1`;
    assert.deepEqual(runs.map((r) => r.migration), [1, 2]);

    // A later file is applied on top of what is there.
    const third: Migration = { version: 3, name: "third", sql: "INSERT INTO runs VALUES (3);" };
    assert.deepEqual(await migrate(sql, "app", [...COUNTER_MIGRATIONS, third]), [3]);
  } finally {
    await sql.end();
    await db.drop();
  }
});

Deno.test("migrate() from several pools at the same time applies each file exactly once", async () => {
  const db = await createTestDatabase();
  const pools = Array.from({ length: 4 }, () => connect(db.url, { schema: "app", max: 2 }));
  try {
    const results = await Promise.all(pools.map((sql) => migrate(sql, "app", COUNTER_MIGRATIONS)));
    // Exactly one of them did the work; the others found it done.
    assert.deepEqual(results.flat().sort(), [1, 2], JSON.stringify(results));
    const runs = await pools[0]!<{ migration: number }[]>`
      SELECT migration FROM app.runs ORDER BY 1`;
    assert.deepEqual(runs.map((r) => r.migration), [1, 2]);
    const [{ count }] = await pools[0]!<[{ count: number }]>`
      SELECT count(*)::int AS count FROM app.schema_migrations`;
    assert.equal(count, 2);
  } finally {
    await Promise.all(pools.map((sql) => sql.end()));
    await db.drop();
  }
});

const HALF_DONE = {
  "0001_good.sql": "CREATE TABLE good (id integer);",
  "0002_half_done.sql": `CREATE TABLE partial (id integer);
                         INSERT INTO partial VALUES (1);
                         SELECT 1 / 0;`,
};

/** Migrates HALF_DONE read from disk and returns the error it fails with. */
async function failingMigration(sql: Sql): Promise<Error> {
  let failure: Error | undefined;
  await withMigrationDir(HALF_DONE, async (url) => {
    const migrations = await readMigrations(url);
    failure = await migrate(sql, "app", migrations).then(
      () => assert.fail("a failing migration was reported as applied"),
      (e: Error) => e,
    );
  });
  return failure!;
}

Deno.test("migrate() rolls a failing file back entirely and keeps the files before it", async () => {
  const db = await createTestDatabase();
  const sql = connect(db.url, { schema: "app", max: 2 });
  const other = connect(db.url, { schema: "app", max: 1 });
  try {
    const error = await failingMigration(sql);
    assert.match(error.message, /division by zero/, "the database's reason is kept");

    const tables = await sql<{ table_name: string }[]>`
      SELECT table_name FROM information_schema.tables WHERE table_schema = 'app'
      ORDER BY table_name`;
    assert.deepEqual(
      tables.map((r) => r.table_name),
      ["good", "schema_migrations"],
      "the failed file left nothing behind, the good one before it stays",
    );
    const versions = await sql<{ version: number }[]>`SELECT version FROM app.schema_migrations`;
    assert.deepEqual(versions.map((r) => r.version), [1]);

    // The lock is released: another pool can migrate (here with a fixed file) without waiting.
    const fixed: Migration[] = [
      { version: 1, name: "good", sql: "CREATE TABLE good (id integer);" },
      { version: 2, name: "half_done", sql: "CREATE TABLE partial (id integer);" },
    ];
    assert.deepEqual(await migrate(other, "app", fixed), [2]);
  } finally {
    await sql.end();
    await other.end();
    await db.drop();
  }
});

Deno.test("migrate() names the failing file as it is on disk", async () => {
  const db = await createTestDatabase();
  const sql = connect(db.url, { schema: "app", max: 2 });
  try {
    const error = await failingMigration(sql);
    // An operator greps the migrations folder for what the error says.
    assert.ok(
      error.message.includes("0002_half_done"),
      `the error should name the file 0002_half_done.sql, got: ${error.message}`,
    );
  } finally {
    await sql.end();
    await db.drop();
  }
});

Deno.test("connect() returns dates as YYYY-MM-DD strings and takes them as strings", async () => {
  const db = await createTestDatabase();
  const sql = connect(db.url, { schema: "app", max: 1 });
  try {
    await migrate(sql, "app", [{
      version: 1,
      name: "dates",
      sql: "CREATE TABLE events (day date NOT NULL, at timestamptz NOT NULL DEFAULT now());",
    }]);
    await sql`INSERT INTO events (day) VALUES (${"2024-02-29"})`;
    const [row] = await sql<{ day: unknown; at: unknown }[]>`SELECT day, at FROM events`;
    assert.equal(row?.day, "2024-02-29", "no timezone shift, no Date object");
    assert.ok(row?.at instanceof Date, "timestamps are still Dates");

    const [computed] = await sql<{ d: unknown }[]>`SELECT '1999-12-31'::date AS d`;
    assert.equal(computed?.d, "1999-12-31");

    const [list] = await sql<{ days: unknown }[]>`
      SELECT ARRAY['2024-01-01'::date, '2024-12-31'::date] AS days`;
    assert.deepEqual(list?.days, ["2024-01-01", "2024-12-31"]);
  } finally {
    await sql.end();
    await db.drop();
  }
});

Deno.test("connect() resolves unqualified names in the given schema", async () => {
  const db = await createTestDatabase();
  const sql = connect(db.url, { schema: "billing", max: 1 });
  try {
    await migrate(sql, "billing", [{
      version: 1,
      name: "t",
      sql: "CREATE TABLE invoices (n integer); INSERT INTO invoices VALUES (7);",
    }]);
    const [row] = await sql<{ n: number }[]>`SELECT n FROM invoices`;
    assert.equal(row?.n, 7);
  } finally {
    await sql.end();
    await db.drop();
  }
});

Deno.test("openDatabase() gives every service schema the platform's outbox, even with no migrations of its own", async () => {
  const db = await createTestDatabase();
  const missing = new URL(`file:///nonexistent-${crypto.randomUUID()}/`);
  const sql = await openDatabase(db.url, "bare", missing);
  try {
    const tables = await sql<{ table_name: string }[]>`
      SELECT table_name FROM information_schema.tables WHERE table_schema = 'bare'
      ORDER BY table_name`;
    assert.deepEqual(tables.map((t) => t.table_name), [
      "outbox",
      "platform_migrations",
      "schema_migrations",
    ]);
    const platform = await sql`
      SELECT version, name FROM bare.platform_migrations ORDER BY version`;
    assert.deepEqual([...platform], [
      { version: 1, name: "outbox" },
      { version: 2, name: "outbox_quarantine" },
      { version: 3, name: "search" },
      { version: 4, name: "search_pieces" },
      { version: 5, name: "search_walk" },
      { version: 6, name: "search_codes" },
      { version: 7, name: "search_hot" },
      { version: 8, name: "payload_statistics" },
    ]);
    const again = await openDatabase(db.url, "bare", missing);
    await again.end();
    const count = await sql`SELECT count(*)::int AS n FROM bare.platform_migrations`;
    assert.equal(count[0]!.n, platform.length, "a second start applies nothing twice");
  } finally {
    await sql.end();
    await db.drop();
  }
});

Deno.test("behind() sends a statement ahead of the next ones and reports its own failure", async () => {
  const db = await createTestDatabase();
  const sql = connect(db.url, { schema: "app", max: 1 });
  try {
    await migrate(sql, "app", [{
      version: 1,
      name: "items",
      sql: "CREATE TABLE items (n int PRIMARY KEY CHECK (n > 0));",
    }]);
    await sql.begin(async (tx) => {
      // What follows runs after it on the server, so it sees the row.
      const [inserted, seen] = await behind(
        tx<{ n: number }[]>`INSERT INTO items VALUES (1) RETURNING n`,
        async () => (await tx<{ count: number }[]>`SELECT count(*)::int AS count FROM items`)[0],
      );
      assert.deepEqual([...inserted], [{ n: 1 }]);
      assert.deepEqual(seen, { count: 1 });
    });
    // A failing statement ahead: its error, not the aborted transaction's, reaches the caller.
    await assert.rejects(
      sql.begin((tx) => behind(tx`INSERT INTO items VALUES (-1)`, async () => await tx`SELECT 1`)),
      (error: Error) => /items_n_check/.test(error.message),
    );
    const [after] = await sql<{ count: number }[]>`SELECT count(*)::int AS count FROM items`;
    assert.equal(after?.count, 1);
  } finally {
    await sql.end();
    await db.drop();
  }
});

Deno.test("transaction() commits what fn wrote, rolls back on a throw or a failed statement, and sends BEGIN with fn's first statement and COMMIT with sendBeforeCommit's", async (t) => {
  const db = await createTestDatabase();
  const sent: string[] = [];
  // One connection: a connection transaction() failed to give back would stall every step after.
  const sql = connect(db.url, { schema: "tx", max: 1, onQuery: (text) => sent.push(text) });
  try {
    await migrate(sql, "tx", [{
      version: 1,
      name: "t",
      sql: "CREATE TABLE notes (n integer PRIMARY KEY);",
    }]);
    const notes = async (): Promise<number[]> =>
      (await sql<{ n: number }[]>`SELECT n FROM notes ORDER BY n`).map((r) => r.n);

    await t.step("commits, and answers what fn answered", async () => {
      const answer = await transaction(sql, async (tx) => {
        await tx`INSERT INTO notes VALUES (1)`;
        const [row] = await tx<{ inside: boolean }[]>`
          SELECT now() = statement_timestamp() AS inside`;
        return row!.inside;
      });
      assert.equal(answer, false, "both statements ran in one transaction (now() is its start)");
      assert.deepEqual(await notes(), [1]);
    });

    await t.step("a throw after a write rolls the write back and is rethrown", async () => {
      await assert.rejects(
        transaction(sql, async (tx) => {
          await tx`INSERT INTO notes VALUES (2)`;
          throw new Error("refused");
        }),
        /refused/,
      );
      assert.deepEqual(await notes(), [1]);
    });

    await t.step("a failing statement rolls everything back and its error is thrown", async () => {
      await assert.rejects(
        transaction(sql, async (tx) => {
          await tx`INSERT INTO notes VALUES (3)`;
          await tx`INSERT INTO notes VALUES (1)`;
        }),
        (error: { code?: string }) => error.code === "23505",
      );
      assert.deepEqual(await notes(), [1]);
    });

    await t.step("BEGIN is not waited for: fn runs before its answer is in", async () => {
      // Watch the BEGIN of the next reserved connection for its answer.
      const reserve = sql.reserve;
      let answered = false;
      sql.reserve = async () => {
        const connection = await reserve();
        const unsafe = connection.unsafe;
        connection.unsafe = ((...args: Parameters<typeof unsafe>) => {
          const query = unsafe(...args);
          if (args[0] === "begin") query.then(() => answered = true, () => {});
          return query;
        }) as typeof unsafe;
        return connection;
      };
      sent.length = 0;
      let answeredBeforeFn: boolean | undefined;
      try {
        await transaction(sql, async (tx) => {
          answeredBeforeFn = answered;
          await tx`INSERT INTO notes VALUES (4)`;
        });
      } finally {
        sql.reserve = reserve;
      }
      assert.equal(answeredBeforeFn, false);
      assert.equal(answered, true);
      assert.deepEqual(sent.map((s) => s.trim().split(/\s+/)[0]), ["begin", "INSERT", "commit"]);
      assert.deepEqual(await notes(), [1, 4]);
    });

    await t.step(
      "sendBeforeCommit: fn goes on without the answer; COMMIT waits for it",
      async () => {
        let answered = false;
        let answeredWhenFnEnded: boolean | undefined;
        await transaction(sql, async (tx) => {
          const insert = tx`INSERT INTO notes VALUES (5)`;
          await sendBeforeCommit(tx, insert);
          insert.then(() => answered = true);
          answeredWhenFnEnded = answered;
        });
        assert.equal(answeredWhenFnEnded, false);
        assert.equal(answered, true);
        assert.deepEqual(await notes(), [1, 4, 5]);
      },
    );

    await t.step(
      "sendBeforeCommit: its failure rolls everything back and is what is thrown",
      async () => {
        await assert.rejects(
          transaction(sql, async (tx) => {
            await tx`INSERT INTO notes VALUES (6)`;
            await sendBeforeCommit(tx, tx`INSERT INTO notes VALUES (1)`);
          }),
          (error: { code?: string }) => error.code === "23505",
        );
        // A statement fn awaits after the failed one only hears that the transaction is aborted;
        // the failure itself is still what is thrown.
        await assert.rejects(
          transaction(sql, async (tx) => {
            await sendBeforeCommit(tx, tx`INSERT INTO notes VALUES (1)`);
            await tx`INSERT INTO notes VALUES (7)`;
          }),
          (error: { code?: string }) => error.code === "23505",
        );
        assert.deepEqual(await notes(), [1, 4, 5]);
      },
    );

    await t.step("sendBeforeCommit outside transaction() waits for the answer", async () => {
      await sendBeforeCommit(sql, sql`INSERT INTO notes VALUES (8)`);
      await assert.rejects(
        sendBeforeCommit(sql, sql`INSERT INTO notes VALUES (8)`),
        (error: { code?: string }) => error.code === "23505",
      );
      assert.deepEqual(await notes(), [1, 4, 5, 8]);
    });
  } finally {
    await sql.end();
    await db.drop();
  }
});

Deno.test("transaction() whose connection dies fails, and the pool goes on with a new connection", async () => {
  const db = await createTestDatabase();
  // One connection: the statement after the failure must get the pool's only slot back.
  const sql = connect(db.url, { schema: "public", max: 1 });
  const admin = connect(db.url, { schema: "public", max: 1 });
  const within = <T>(promise: Promise<T>, ms: number): Promise<T> =>
    Promise.race([
      promise,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error("hung")), ms)),
    ]);
  try {
    const failed = await transaction(sql, async (tx) => {
      const [row] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      // The server ends this connection under a statement, as a restart or a failover would.
      // (A statement sent once it is gone, with none on the way, is postgres.js's own crash,
      // porsager/postgres#1154: it writes to the closed socket.)
      const sleeping = tx`SELECT pg_sleep(5)`.execute();
      sleeping.catch(() => {}); // awaited below; it may fail before that
      await admin`SELECT pg_terminate_backend(${row!.pid})`;
      await sleeping;
    }).then(() => null, (error: unknown) => error);
    assert.ok(isDatabaseUnavailable(failed), `a connection failure: ${failed}`);
    // Released as it was, the dead connection would be handed out again and this would hang.
    const [again] = await within(sql<{ ok: number }[]>`SELECT 1 AS ok`, 10_000);
    assert.equal(again?.ok, 1);
    assert.equal(
      await within(transaction(sql, async (tx) => (await tx`SELECT 2 AS n`)[0]!.n), 10_000),
      2,
    );
  } finally {
    await sql.end({ timeout: 1 });
    await admin.end({ timeout: 1 });
    await db.drop();
  }
});

Deno.test("transaction() and behind() whose connection dies under statements sent ahead fail at once, never hang", async (t) => {
  const db = await createTestDatabase();
  const sql = connect(db.url, { schema: "public", max: 2 });
  const admin = connect(db.url, { schema: "public", max: 1 });
  const within = <T>(promise: Promise<T>, ms: number): Promise<T> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    return Promise.race([
      promise,
      new Promise<never>((_, reject) => timer = setTimeout(() => reject(new Error("hung")), ms)),
    ]).finally(() => clearTimeout(timer));
  };
  /**
   * Runs `fn` in a transaction whose connection the server ends 100 ms after `fn` starts. Each
   * `fn` first sends a statement with a parameter that is new on the connection: postgres.js
   * holds the statements after it in the reserved connection's own queue until it is described,
   * and those are the ones a dead connection never answers (porsager/postgres#1186).
   */
  const killedUnder = async (fn: (tx: TransactionSql) => Promise<unknown>): Promise<unknown> => {
    const work = transaction(sql, async (tx) => {
      const [row] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      setTimeout(() => void admin`SELECT pg_terminate_backend(${row!.pid})`.catch(() => {}), 100);
      return await fn(tx);
    });
    return await within(work.then(() => null, (error: unknown) => error), 10_000);
  };
  const slow = (tx: TransactionSql, n: number): postgres.PendingQuery<postgres.Row[]> =>
    tx`SELECT pg_sleep(0.5), ${n}::int AS n`;
  try {
    await t.step("a statement awaited behind one handed to sendBeforeCommit", async () => {
      const failed = await killedUnder(async (tx) => {
        await sendBeforeCommit(tx, slow(tx, 1));
        return await tx`SELECT ${2}::int AS n`;
      });
      assert.ok(isDatabaseUnavailable(failed), `a connection failure: ${failed}`);
    });
    await t.step("the COMMIT behind a statement handed to sendBeforeCommit", async () => {
      const failed = await killedUnder(async (tx) => {
        await sendBeforeCommit(tx, slow(tx, 3));
        await sendBeforeCommit(tx, tx`SELECT ${4}::int AS n`);
      });
      assert.ok(isDatabaseUnavailable(failed), `a connection failure: ${failed}`);
    });
    await t.step("behind(): what follows the statement sent ahead", async () => {
      const failed = await killedUnder((tx) => behind(slow(tx, 5), () => tx`SELECT ${6}::int`));
      assert.ok(isDatabaseUnavailable(failed), `a connection failure: ${failed}`);
    });
    await t.step("the pool serves the next transaction", async () => {
      const n = await within(
        transaction(sql, async (tx) => (await tx`SELECT 7 AS n`)[0]!.n),
        10_000,
      );
      assert.equal(n, 7);
    });
  } finally {
    await sql.end({ timeout: 1 });
    await admin.end({ timeout: 1 });
    await db.drop();
  }
});

/**
 * A TCP relay to PostgreSQL that hands each ReadyForQuery to the client on its own, a moment
 * after what came before it, as a loaded network or a large answer may: postgres.js answers a
 * statement at its CommandComplete and runs what was waiting on it before the ReadyForQuery.
 */
function splittingRelay(url: string): { url: string; close(): void } {
  return tcpRelay(url, async (client, server) => {
    client.readable.pipeTo(server.writable).catch(() => {});
    const writer = client.writable.getWriter();
    let buffered = new Uint8Array(0);
    try {
      for await (const chunk of server.readable) {
        const joined = new Uint8Array(buffered.length + chunk.length);
        joined.set(buffered);
        joined.set(chunk, buffered.length);
        // Whole messages only (a type byte, then a length that counts itself).
        let at = 0;
        let from = 0;
        while (joined.length - at >= 5) {
          const length = new DataView(joined.buffer).getInt32(at + 1);
          if (joined.length - at < 1 + length) break;
          if (joined[at] === 0x5a /* Z: ReadyForQuery */) {
            await writer.write(joined.slice(from, at));
            await new Promise((resolve) => setTimeout(resolve, 5));
            from = at;
          }
          at += 1 + length;
        }
        await writer.write(joined.slice(from, at));
        buffered = joined.slice(at);
      }
    } catch { /* either side went away */ }
    writer.close().catch(() => {});
  });
}

Deno.test("read() gives its connection back once its COMMIT is answered: whoever waits for it never runs inside its transaction", async () => {
  const db = await createTestDatabase();
  const relay = splittingRelay(db.url);
  // One connection: the statement waiting for it gets it the moment read() lets it go.
  const sql = connect(relay.url, { schema: "public", max: 1 });
  try {
    const organization = crypto.randomUUID();
    for (let i = 0; i < 5; i++) {
      // A statement new on the connection (a parameter, not yet described): postgres.js holds the
      // COMMIT sent after its answer until the ReadyForQuery that follows it.
      const reading = withOrganization(
        organization,
        () => read(sql, (q) => q.unsafe<{ n: number }[]>(`SELECT $1::int + ${i} AS n`, [i])),
      );
      // One simple-protocol message, waiting for the connection: outside a transaction block,
      // its own transaction begins with it.
      const waiting = sql.unsafe<{ open: boolean; organization: string | null }[]>(
        `SELECT now() <> statement_timestamp() AS open,
          nullif(current_setting('${ORGANIZATION_SETTING}', true), '') AS organization`,
      ).execute();
      assert.equal((await reading)[0]?.n, 2 * i);
      assert.deepEqual((await waiting)[0], { open: false, organization: null }, `read ${i}`);
    }
  } finally {
    await sql.end({ timeout: 1 });
    relay.close();
    await db.drop();
  }
});

Deno.test("a pool ends right after a read, its connection given back once the COMMIT is answered", async () => {
  const db = await createTestDatabase();
  const sql = connect(db.url, { schema: "public", max: 1 });
  try {
    const [row] = await withOrganization(
      crypto.randomUUID(),
      () => read(sql, (q) => q<{ n: number }[]>`SELECT ${1}::int AS n`),
    );
    assert.equal(row?.n, 1);
    // postgres.js's end() alone would wait for ever on the connection still reserved for the
    // COMMIT (porsager/postgres#925).
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      sql.end(),
      new Promise((_, reject) => timer = setTimeout(() => reject(new Error("hung")), 10_000)),
    ]).finally(() => clearTimeout(timer));
  } finally {
    // Not sql.end() again: it would wait on the first.
    await db.drop();
  }
});

/**
 * A TCP relay to PostgreSQL that notes, in order, each chunk it passes on and which side sent it
 * (as Latin-1 text, to look for a statement in): what the client sent before the server answered.
 */
function recordingRelay(url: string): {
  url: string;
  log: { from: "client" | "server"; text: string }[];
  close(): void;
} {
  const log: { from: "client" | "server"; text: string }[] = [];
  const latin1 = new TextDecoder("latin1");
  const copy = async (from: "client" | "server", source: Deno.Conn, sink: Deno.Conn) => {
    try {
      for await (const chunk of source.readable) {
        log.push({ from, text: latin1.decode(chunk) });
        let written = 0;
        while (written < chunk.length) written += await sink.write(chunk.subarray(written));
      }
    } catch { /* either side went away */ }
  };
  const relay = tcpRelay(url, async (client, server) => {
    await Promise.all([copy("client", client, server), copy("server", server, client)]);
  });
  return { ...relay, log };
}

Deno.test("a read of one statement, or one that says allSent, sends its COMMIT with it, before any answer; other reads once they are done", async (t) => {
  const db = await createTestDatabase();
  const relay = recordingRelay(db.url);
  const sql = connect(relay.url, { schema: "public", max: 1 });
  const organization = crypto.randomUUID();
  /** Whether the read's COMMIT reached the relay before the server had answered any of it. */
  const commitAhead = async (reading: () => Promise<unknown>): Promise<boolean> => {
    // Twice: a statement's first use on a connection is described first, and postgres.js holds
    // back what follows it until that is answered.
    await withOrganization(organization, reading);
    // A read's COMMIT may still be on its way when it answers.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const from = relay.log.length;
    await withOrganization(organization, reading);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const log = relay.log.slice(from);
    const commit = log.findIndex((c) => c.from === "client" && /commit\0/i.test(c.text));
    const answer = log.findIndex((c) => c.from === "server");
    assert.ok(commit >= 0 && answer >= 0, "the read went through the relay");
    return commit < answer;
  };
  try {
    await t.step("one statement, answered unsent", async () => {
      assert.equal(await commitAhead(() => read(sql, (q) => q`SELECT ${1}::int AS n`)), true);
    });
    await t.step("a streamed statement, then allSent", async () => {
      const rows: number[] = [];
      const streamed = () =>
        read(sql, async (q) => {
          const done = q<{ n: number }[]>`SELECT generate_series(1, ${3}::int) AS n`
            .forEach((row) => void rows.push(row.n));
          allSent(q);
          await done;
        });
      assert.equal(await commitAhead(streamed), true);
      assert.deepEqual(rows, [1, 2, 3, 1, 2, 3]);
    });
    await t.step("a statement awaited in fn: COMMIT once fn is done", async () => {
      const awaited = () => read(sql, async (q) => (await q`SELECT ${2}::int AS n`)[0]);
      assert.equal(await commitAhead(awaited), false);
    });
  } finally {
    await sql.end({ timeout: 1 });
    relay.close();
    await db.drop();
  }
});

/** The organisation the statement's transaction names to the policies, null when none. */
const named = (q: Queryable) =>
  q<{ organization: string | null }[]>`
    SELECT nullif(current_setting(${ORGANIZATION_SETTING}, true), '') AS organization`;

Deno.test("allSent ends the read's transaction: a statement after it names no organisation; in a nested read it does nothing", async (t) => {
  const db = await createTestDatabase();
  const sql = connect(db.url, { schema: "public", max: 2 });
  const organization = crypto.randomUUID();
  try {
    await t.step("after allSent, outside the transaction", async () => {
      const [before, after] = await withOrganization(organization, () =>
        read(sql, async (q) => {
          const before = (await named(q))[0]!.organization;
          allSent(q);
          return [before, (await named(q))[0]!.organization];
        }));
      assert.equal(before, organization);
      assert.equal(after, null);
    });
    await t.step("allSent of a nested read leaves the outer one's transaction open", async () => {
      const after = await withOrganization(organization, () =>
        read(sql, async (q) => {
          await read(sql, async (inner) => {
            await named(inner);
            allSent(inner);
          });
          return (await named(q))[0]!.organization;
        }));
      assert.equal(after, organization);
    });
    await t.step("in a transaction it does nothing", async () => {
      const after = await withOrganization(organization, () =>
        transaction(sql, async (tx) => {
          allSent(tx);
          return (await named(tx))[0]!.organization;
        }));
      assert.equal(after, organization);
    });
    await t.step(
      "a failed statement sent with its COMMIT: its error, and a clean connection after",
      async () => {
        for (let i = 0; i < 3; i++) {
          await assert.rejects(
            withOrganization(organization, () => read(sql, (q) => q`SELECT 1 / ${0}::int AS n`)),
            (error: { code?: string }) => error.code === "22012",
          );
          const [row] = await withOrganization(organization, () => read(sql, (q) => named(q)));
          assert.equal(row?.organization, organization);
          const reads = await Promise.all([0, 1].map(() => named(sql)));
          for (const [outside] of reads) {
            assert.equal(outside?.organization, null, "no transaction left open");
          }
        }
      },
    );
  } finally {
    await sql.end({ timeout: 1 });
    await db.drop();
  }
});

Deno.test("a read that fails after allSent gives its connection back only once its COMMIT is answered: whoever waits for it never runs inside its transaction", async (t) => {
  const db = await createTestDatabase();
  // One connection: the read waiting for it gets it the moment the failed read lets it go.
  const sql = connect(db.url, { schema: "public", max: 1 });
  const organization = crypto.randomUUID();
  /** A read for the organisation that sends `statement` (streamed), says allSent, and fails. */
  const failing = (statement: (q: Queryable) => Promise<unknown>) =>
    withOrganization(organization, () =>
      read(sql, async (q) => {
        const streaming = statement(q);
        allSent(q);
        await streaming;
      }));
  /** A read of no organisation that was waiting for the connection meanwhile. */
  const waiting = () => read(sql, named);
  try {
    // Each statement is new on the connection (its text differs), so postgres.js describes it
    // first and holds the COMMIT behind it in the reserved connection's own queue.
    await t.step("a row the read's own code refuses", async () => {
      for (let i = 0; i < 3; i++) {
        // Rows large enough to be sent one by one, the statement still running at the first.
        const failed = failing((q) =>
          q`SELECT g, repeat('x', 200000) AS pad, pg_sleep(0.1), ${q.unsafe(String(i))} AS run
            FROM generate_series(1, ${3}::int) g`.raw().forEach(() => {
            throw new Error("refused");
          })
        );
        const next = waiting();
        await assert.rejects(failed, /refused/);
        assert.deepEqual((await next)[0], { organization: null });
      }
    });
    await t.step("a statement the server fails before its first row", async () => {
      for (let i = 0; i < 3; i++) {
        const failed = failing((q) =>
          q`SELECT 1 / ${0}::int AS boom, ${q.unsafe(String(i))} AS run`.raw().forEach(() => {})
        );
        const next = waiting();
        await assert.rejects(failed, (error: { code?: string }) => error.code === "22012");
        assert.deepEqual((await next)[0], { organization: null });
      }
    });
  } finally {
    await sql.end({ timeout: 1 });
    await db.drop();
  }
});

Deno.test("after allSent, a nested read opens its own connection, and a connection lost under the streamed statement is not given back", async (t) => {
  const db = await createTestDatabase();
  const sql = connect(db.url, { schema: "public", max: 1, applicationName: "streamed_lost" });
  const pool2 = connect(db.url, { schema: "public", max: 2 });
  const admin = connect(db.url, { schema: "public", max: 1 });
  const organization = crypto.randomUUID();
  try {
    await t.step("a nested read after allSent names the organisation", async () => {
      const nested = await withOrganization(organization, () =>
        read(pool2, async (q) => {
          await q`SELECT 1`.forEach(() => {});
          allSent(q);
          return (await read(pool2, (inner) => named(inner)))[0]!.organization;
        }));
      assert.equal(nested, organization);
    });
    await t.step("killed mid-stream: the next read gets a live connection", async () => {
      let killed = false;
      const streamed = withOrganization(organization, () =>
        read(sql, async (q) => {
          const rows = q`SELECT g, repeat('x', 200000) AS pad, pg_sleep(0.3)
            FROM generate_series(1, ${5}::int) g`.raw()
            .forEach(() => {
              if (killed) return;
              killed = true;
              void admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE application_name = 'streamed_lost'`;
            })
            // As streamPage does: a failure errors the stream, not the read.
            .catch(() => {});
          allSent(q);
          await rows;
        }));
      await streamed.catch(() => {});
      const [row] = await withOrganization(organization, () => read(sql, (q) => named(q)));
      assert.equal(row?.organization, organization);
    });
  } finally {
    await sql.end({ timeout: 1 });
    await pool2.end({ timeout: 1 });
    await admin.end({ timeout: 1 });
    await db.drop();
  }
});
