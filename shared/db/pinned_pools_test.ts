import assert from "node:assert/strict";
import { createTestDatabase, tcpRelay, type TestDatabase } from "@printshop/shared/testing";
import {
  connect,
  isDatabaseUnavailable,
  oneStatement,
  pinnedOrganizations,
  pinnedSettingRefused,
  read,
  type Sql,
  stopPinnedReads,
  transaction,
  withOrganization,
} from "./mod.ts";
import type { PinnedPoolLimits } from "./pinned_pools.ts";
import { ORGANIZATION_SETTING, POLICY_CHECK } from "./tenancy.ts";

const A = "0193a9d5-0000-7000-8000-00000000000a";
const B = "0193a9d5-0000-7000-8000-00000000000b";
const C = "0193a9d5-0000-7000-8000-00000000000c";

/**
 * A database with one tenant table, held to the policy the services' tables have, with a row of
 * each of A, B and C; and a pool of the runtime role's with pinned reads as `limits` says, whose
 * every statement `sent` records.
 */
async function withPinned(
  limits: PinnedPoolLimits,
  fn: (sql: Sql, sent: string[], db: TestDatabase) => Promise<void>,
): Promise<void> {
  const db = await createTestDatabase();
  const admin = connect(db.url, { schema: "public", max: 1 });
  const sent: string[] = [];
  const sql = connect(db.appUrl, {
    schema: "public",
    max: 2,
    pinnedReads: limits,
    onQuery: (text) => sent.push(text.trim().toLowerCase()),
  });
  try {
    await admin.unsafe(`
      CREATE TABLE things (organization_id uuid NOT NULL, name text NOT NULL);
      ALTER TABLE things ENABLE ROW LEVEL SECURITY;
      ALTER TABLE things FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON things USING (${POLICY_CHECK}) WITH CHECK (${POLICY_CHECK});
      GRANT SELECT, INSERT ON things TO printshop_app;
      INSERT INTO things VALUES ('${A}', 'a'), ('${B}', 'b'), ('${C}', 'c');
    `);
    await fn(sql, sent, db);
  } finally {
    await sql.end({ timeout: 1 });
    await admin.end();
    await db.drop();
  }
}

/** What `organization` reads of the table, and whether it went in a transaction of its own. */
async function readAs(
  sql: Sql,
  sent: string[],
  organization: string,
): Promise<{ names: string[]; inTransaction: boolean }> {
  const before = sent.length;
  const rows = await withOrganization(
    organization,
    () => read(sql, (q) => q<{ name: string }[]>`SELECT name FROM things ORDER BY name`),
  );
  return {
    names: rows.map((row) => row.name),
    inTransaction: sent.slice(before).some((text) => text.startsWith("begin")),
  };
}

Deno.test("pinned reads: an organisation with a pool reads in no transaction and sees its own rows only; one without reads in a transaction", async () => {
  await withPinned(
    { pools: 1, connections: 2, idleMs: 60_000, warmReads: 1 },
    async (sql, sent) => {
      assert.deepEqual(await readAs(sql, sent, A), { names: ["a"], inTransaction: false });
      assert.deepEqual(pinnedOrganizations(sql), [A]);
      // The one place is A's: B reads as every organisation can.
      assert.deepEqual(await readAs(sql, sent, B), { names: ["b"], inTransaction: true });
      assert.deepEqual(await readAs(sql, sent, A), { names: ["a"], inTransaction: false });
      // A read for no organisation: nothing pinned, nothing seen.
      const none = await read(sql, (q) => q<{ name: string }[]>`SELECT name FROM things`);
      assert.deepEqual([...none], []);
      assert.deepEqual(pinnedOrganizations(sql), [A]);
    },
  );
});

Deno.test("pinned reads: every connection of a pool is its organisation's, whichever serves the read", async () => {
  await withPinned({ pools: 2, connections: 3, idleMs: 60_000, warmReads: 1 }, async (sql) => {
    // More reads at once than connections, of two organisations interleaved.
    const reads = Array.from({ length: 24 }, (_, i) => {
      const organization = i % 2 === 0 ? A : B;
      return withOrganization(
        organization,
        () =>
          read(sql, (q) =>
            q<{ names: string[]; setting: string; pid: number }[]>`
            SELECT array_agg(name ORDER BY name) AS names,
              current_setting(${ORGANIZATION_SETTING}) AS setting, pg_backend_pid() AS pid
            FROM things, pg_sleep(0.01)`),
      )
        .then(([row]) => ({ organization, ...row! }));
    });
    const answers = await Promise.all(reads);
    const pidsOf = new Map<string, Set<number>>();
    for (const answer of answers) {
      assert.deepEqual(answer.names, [answer.organization === A ? "a" : "b"]);
      assert.equal(answer.setting, answer.organization);
      const pids = pidsOf.get(answer.organization) ?? new Set();
      pids.add(answer.pid);
      pidsOf.set(answer.organization, pids);
    }
    // No connection served both.
    const shared = [...pidsOf.get(A)!].filter((pid) => pidsOf.get(B)!.has(pid));
    assert.deepEqual(shared, []);
    assert.deepEqual([...pinnedOrganizations(sql)].sort(), [A, B]);
  });
});

Deno.test("pinned reads: a place goes to another organisation once its holder has been idle, never under a read", async () => {
  await withPinned(
    { pools: 1, connections: 1, idleMs: 300, warmReads: 1 },
    async (sql, sent, db) => {
      const pidOf = async (organization: string): Promise<number> => {
        const [row] = await withOrganization(
          organization,
          () => read(sql, (q) => q<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`),
        );
        return row!.pid;
      };
      assert.equal((await readAs(sql, sent, A)).inTransaction, false);
      const pidOfA = await pidOf(A);
      // A's long read holds its place past the idle time.
      const long = withOrganization(
        A,
        () => read(sql, (q) => q<{ name: string }[]>`SELECT name FROM things, pg_sleep(0.6)`),
      );
      await new Promise((resolve) => setTimeout(resolve, 400));
      assert.deepEqual(await readAs(sql, sent, B), { names: ["b"], inTransaction: true });
      assert.deepEqual((await long).map((row) => row.name), ["a"]);
      // Idle from the end of its last read, not its start: still A's.
      assert.deepEqual(await readAs(sql, sent, B), { names: ["b"], inTransaction: true });
      assert.deepEqual(pinnedOrganizations(sql), [A]);
      // Idle for longer than idleMs: the place is B's, and A's pool is ended.
      await new Promise((resolve) => setTimeout(resolve, 400));
      assert.deepEqual(await readAs(sql, sent, B), { names: ["b"], inTransaction: false });
      assert.deepEqual(pinnedOrganizations(sql), [B]);
      assert.deepEqual(await readAs(sql, sent, A), { names: ["a"], inTransaction: true });
      assert.notEqual(await pidOf(B), pidOfA);
      const admin = connect(db.url, { schema: "public", max: 1 });
      try {
        // A's connection is closed (in the background: given a moment).
        let open = true;
        for (let i = 0; i < 100 && open; i++) {
          const [row] = await admin<{ open: boolean }[]>`
          SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = ${pidOfA}) AS open`;
          open = row!.open;
          if (open) await new Promise((resolve) => setTimeout(resolve, 20));
        }
        assert.equal(open, false);
      } finally {
        await admin.end();
      }
    },
  );
});

Deno.test("pinned reads: a read nested in a pinned one stays on its pool; one that plans afresh, or in a transaction, does not pin", async () => {
  await withPinned(
    { pools: 1, connections: 1, idleMs: 60_000, warmReads: 1 },
    async (sql, sent) => {
      const before = sent.length;
      const nested = await withOrganization(A, () =>
        read(sql, async (q) => {
          const [outer] = await q<{ name: string }[]>`SELECT name FROM things`;
          const [inner] = await read(q, (r) => r<{ name: string }[]>`SELECT name FROM things`);
          return [outer?.name, inner?.name];
        }));
      assert.deepEqual(nested, ["a", "a"]);
      assert.equal(sent.slice(before).some((text) => text.startsWith("begin")), false);
      const planned = sent.length;
      const custom = await withOrganization(
        B,
        () =>
          read(sql, (q) => q<{ name: string }[]>`SELECT name FROM things`, { customPlans: true }),
      );
      assert.deepEqual(custom.map((row) => row.name), ["b"]);
      assert(sent.slice(planned).some((text) => text.includes("plan_cache_mode")));
      // In C's transaction, a read is the transaction's: it sees what the transaction sees.
      const inTransaction = await withOrganization(C, () =>
        transaction(sql, async (tx) => {
          await tx`SET LOCAL application_name = 'in the transaction'`;
          return await read(sql, (q) =>
            q<{ name: string; app: string }[]>`
            SELECT name, current_setting('application_name') AS app FROM things`);
        }));
      assert.deepEqual([...inTransaction], [{ name: "c", app: "in the transaction" }]);
      assert.deepEqual(pinnedOrganizations(sql), [A]);
    },
  );
});

Deno.test("pinned reads: an organisation id that is no UUID is refused before any pool is made", async () => {
  await withPinned({ pools: 2, connections: 1, idleMs: 60_000, warmReads: 1 }, async (sql) => {
    await assert.rejects(
      withOrganization("a' OR true --", () => read(sql, (q) => q`SELECT name FROM things`)),
      /UUID/,
    );
    assert.deepEqual(pinnedOrganizations(sql), []);
  });
});

Deno.test("pinned reads: the pool's end() ends its pinned pools, and no read pins after it", async () => {
  const db = await createTestDatabase();
  const admin = connect(db.url, { schema: "public", max: 1 });
  const sql = connect(db.appUrl, {
    schema: "public",
    max: 1,
    applicationName: "pinned-end",
    pinnedReads: { pools: 2, connections: 2, idleMs: 60_000, warmReads: 1 },
  });
  try {
    await withOrganization(A, () => read(sql, (q) => q`SELECT 1`));
    await withOrganization(B, () => read(sql, (q) => q`SELECT 1`));
    const count = async (): Promise<number> => {
      const [row] = await admin<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE application_name = 'pinned-end pinned'`;
      return row!.n;
    };
    assert(await count() >= 2);
    await sql.end({ timeout: 1 });
    let left = await count();
    for (let i = 0; i < 50 && left > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      left = await count();
    }
    assert.equal(left, 0);
    assert.deepEqual(pinnedOrganizations(sql), []);
  } finally {
    await admin.end();
    await db.drop();
  }
});

Deno.test("pinned reads: a read whose connection is killed fails as the database unavailable, and the next one reconnects as the same organisation", async () => {
  await withPinned(
    { pools: 1, connections: 2, idleMs: 60_000, warmReads: 1 },
    async (sql, sent, db) => {
      assert.deepEqual((await readAs(sql, sent, A)).names, ["a"]);
      const admin = connect(db.url, { schema: "public", max: 1 });
      try {
        const killPinned = async (): Promise<number> => {
          const [row] = await admin<{ n: number }[]>`
          SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
          WHERE application_name = 'public pinned'`;
          return row!.n;
        };
        // One read in flight when its connection goes: it fails, it does not hang.
        const inFlight = withOrganization(
          A,
          () => read(sql, (q) => q<{ name: string }[]>`SELECT name FROM things, pg_sleep(5)`),
        );
        const failed = inFlight.then(() => null, (error: unknown) => error);
        await new Promise((resolve) => setTimeout(resolve, 300));
        assert((await killPinned()) >= 1);
        const error = await failed;
        assert(isDatabaseUnavailable(error), `a lost connection: ${String(error)}`);
        // The pool opens new connections, with the same start-up setting: a read sent before it
        // saw the close may fail as the one above did, and the next does not.
        await killPinned();
        let row: { names: string[]; setting: string } | undefined;
        for (let attempt = 1; row === undefined; attempt++) {
          try {
            [row] = await withOrganization(
              A,
              () =>
                read(sql, (q) =>
                  q<{ names: string[]; setting: string }[]>`
                SELECT array_agg(name) AS names, current_setting(${ORGANIZATION_SETTING}) AS setting
                FROM things`),
            );
          } catch (error) {
            assert(isDatabaseUnavailable(error) && attempt < 3, String(error));
          }
        }
        assert.deepEqual(row, { names: ["a"], setting: A });
        assert.deepEqual(pinnedOrganizations(sql), [A]);
      } finally {
        await admin.end();
      }
    },
  );
});

Deno.test("pinned reads: one statement that writes goes alone to the organisation's pool, held to the policy's check", async () => {
  await withPinned(
    { pools: 1, connections: 1, idleMs: 60_000, warmReads: 1 },
    async (sql, sent) => {
      const insert = async (organization: string, owner: string): Promise<unknown> => {
        const rows = await withOrganization(
          organization,
          () =>
            oneStatement(sql, (tx) =>
              tx<{ name: string }[]>`
            INSERT INTO things VALUES (${owner}, ${"new of " + organization}) RETURNING name`),
        );
        return [...rows];
      };
      const before = sent.length;
      assert.deepEqual(await insert(A, A), [{ name: `new of ${A}` }]);
      assert.deepEqual(pinnedOrganizations(sql), [A]);
      assert.equal(sent.slice(before).some((text) => text.startsWith("begin")), false);
      // A row of another organisation's is refused on A's connection, and nothing is written.
      await assert.rejects(insert(A, B), /row-level security/);
      // B has no place: its statement is a transaction of its own, held to the same check.
      await assert.rejects(insert(B, A), /row-level security/);
      assert.deepEqual(await insert(B, B), [{ name: `new of ${B}` }]);
      assert.deepEqual((await readAs(sql, sent, A)).names, ["a", `new of ${A}`]);
      assert.deepEqual((await readAs(sql, sent, B)).names, ["b", `new of ${B}`]);
    },
  );
});

Deno.test("pinned reads: a place is earned by warmReads reads within idleMs, so an organisation that reads now and then never pays for a pool", async () => {
  await withPinned(
    { pools: 1, connections: 1, idleMs: 400, warmReads: 3 },
    async (sql, sent) => {
      // Two reads, then a pause longer than idleMs: the count starts again.
      assert.equal((await readAs(sql, sent, A)).inTransaction, true);
      assert.equal((await readAs(sql, sent, A)).inTransaction, true);
      await new Promise((resolve) => setTimeout(resolve, 450));
      assert.equal((await readAs(sql, sent, A)).inTransaction, true);
      assert.equal((await readAs(sql, sent, A)).inTransaction, true);
      assert.deepEqual(pinnedOrganizations(sql), []);
      // The third within idleMs earns the place.
      assert.deepEqual(await readAs(sql, sent, A), { names: ["a"], inTransaction: false });
      assert.deepEqual(pinnedOrganizations(sql), [A]);
      // B as busy, while A's place is in use: B reads in transactions.
      for (let i = 0; i < 5; i++) assert.equal((await readAs(sql, sent, B)).inTransaction, true);
      assert.deepEqual(pinnedOrganizations(sql), [A]);
    },
  );
});

Deno.test("pinned reads: a read that plans afresh, nested in a pinned one, plans afresh as the same organisation", async () => {
  await withPinned({ pools: 1, connections: 1, idleMs: 60_000, warmReads: 1 }, async (sql) => {
    const [row] = await withOrganization(A, () =>
      read(sql, (q) =>
        read(
          q,
          (r) =>
            r<{ plans: string; names: string[] }[]>`
              SELECT current_setting('plan_cache_mode') AS plans, array_agg(name) AS names
              FROM things`,
          { customPlans: true },
        )));
    assert.deepEqual(row, { plans: "force_custom_plan", names: ["a"] });
    assert.deepEqual(pinnedOrganizations(sql), [A]);
    // And the setting went with its transaction: A's next read plans as it always does.
    const [after] = await withOrganization(
      A,
      () =>
        read(
          sql,
          (q) => q<{ plans: string }[]>`SELECT current_setting('plan_cache_mode') AS plans`,
        ),
    );
    assert.equal(after?.plans, "auto");
  });
});

/**
 * A TCP relay to the test server standing for a transaction pooler: `drop` takes the
 * organisation out of each connection's start-up message (as PgBouncer's
 * `ignore_startup_parameters` does), `refuse` answers a connection that carries it with a FATAL
 * error and closes it (as PgBouncer does with a parameter it does not know), `hang up` closes it
 * without a word.
 */
function poolerRelay(
  url: string,
  mode: "drop" | "refuse" | "hang up",
): { url: string; close(): void } {
  const setting = new TextEncoder().encode(ORGANIZATION_SETTING + "\0");
  return tcpRelay(url, async (client, server) => {
    const reader = client.readable.getReader();
    // The start-up message: its length, the protocol version, then name\0value\0 pairs and \0.
    let head = new Uint8Array(0);
    while (head.length < 4 || head.length < new DataView(head.buffer).getInt32(0)) {
      const { value, done } = await reader.read();
      if (done) return;
      head = new Uint8Array([...head, ...value]);
    }
    const length = new DataView(head.buffer).getInt32(0);
    const message = head.slice(0, length);
    const carries = indexOf(message, setting) >= 0;
    if (carries && mode !== "drop") {
      if (mode === "refuse") {
        // PgBouncer's answer to a parameter it does not know: a FATAL error, then the close.
        const fields = new TextEncoder().encode(
          "SFATAL\0VFATAL\0C08P01\0Munsupported startup parameter: " +
            `${ORGANIZATION_SETTING}\0\0`,
        );
        const error = new Uint8Array(5 + fields.length);
        error[0] = 0x45; // E: ErrorResponse
        new DataView(error.buffer).setInt32(1, 4 + fields.length);
        error.set(fields, 5);
        await client.write(error);
      }
      client.close();
      server.close();
      return;
    }
    await server.write(carries ? withoutSetting(message, setting) : message);
    if (head.length > length) await server.write(head.slice(length));
    reader.releaseLock();
    client.readable.pipeTo(server.writable).catch(() => {});
    server.readable.pipeTo(client.writable).catch(() => {});
  });
}

function indexOf(bytes: Uint8Array, part: Uint8Array): number {
  outer: for (let i = 0; i + part.length <= bytes.length; i++) {
    for (let j = 0; j < part.length; j++) if (bytes[i + j] !== part[j]) continue outer;
    return i;
  }
  return -1;
}

/** The start-up message without the setting's name\0value\0 pair, its length written anew. */
function withoutSetting(message: Uint8Array, setting: Uint8Array): Uint8Array {
  const at = indexOf(message, setting);
  const valueEnd = message.indexOf(0, at + setting.length);
  const out = new Uint8Array([...message.slice(0, at), ...message.slice(valueEnd + 1)]);
  new DataView(out.buffer).setInt32(0, out.length);
  return out;
}

Deno.test("pinned reads: a server that keeps the start-up setting passes the check; a pooler that drops or refuses it does not, and the service then reads in transactions", async () => {
  const db = await createTestDatabase();
  const dropping = poolerRelay(db.appUrl, "drop");
  const refusing = poolerRelay(db.appUrl, "refuse");
  const hangingUp = poolerRelay(db.appUrl, "hang up");
  try {
    assert.equal(await pinnedSettingRefused(db.appUrl), null);
    assert.match(await pinnedSettingRefused(dropping.url) ?? "", /did not keep/);
    assert.match(
      await pinnedSettingRefused(refusing.url) ?? "",
      /failed: PostgresError: unsupported startup parameter/,
    );
    // postgres.js tries again for ever when the server closes at start-up: the check gives up.
    assert.match(await pinnedSettingRefused(hangingUp.url, 500) ?? "", /no answer within 500 ms/);
    // Through the dropping pooler a pinned read would see nothing: stopped, reads go as before.
    const sql = connect(dropping.url, {
      schema: "public",
      max: 1,
      pinnedReads: { pools: 1, connections: 1, idleMs: 60_000, warmReads: 1 },
    });
    try {
      const seen = (): Promise<{ setting: string | null }[]> =>
        withOrganization(A, () =>
          read(sql, (q) =>
            q<{ setting: string | null }[]>`
              SELECT nullif(current_setting(${ORGANIZATION_SETTING}, true), '') AS setting`));
      assert.deepEqual([...await seen()], [{ setting: null }]);
      await stopPinnedReads(sql);
      assert.deepEqual([...await seen()], [{ setting: A }]);
      assert.deepEqual(pinnedOrganizations(sql), []);
    } finally {
      await sql.end({ timeout: 1 });
    }
  } finally {
    dropping.close();
    refusing.close();
    hangingUp.close();
    await db.drop();
  }
});

Deno.test("pinned reads: no code sets the organisation for a session, which a pinned connection would keep for good", async () => {
  // Where the setting may be named at all, and why: a statement that set it for the session on a
  // pinned connection (SET without LOCAL, set_config(…, false)) would outlive its request. RESET
  // and DISCARD go back to the start-up value, the connection's own organisation.
  const allowed = new Set([
    "shared/db/tenancy.ts", // declares it and the policy that reads it
    "shared/db/mod.ts", // SET LOCAL at a transaction's start; a pinned pool's start-up parameter
    "shared/db/pinned_pools.ts", // says what it is
    "shared/db/platform_migrations/0003_search.sql", // reads it
    "shared/testing/plans.ts", // set_config(…, true) in a test transaction
  ]);
  const root = new URL("../../", import.meta.url);
  const found: string[] = [];
  const walk = async (dir: URL, path: string): Promise<void> => {
    for await (const entry of Deno.readDir(dir)) {
      const name = `${path}${entry.name}`;
      if (entry.isDirectory) {
        if (!["node_modules", ".git", ".data", "bench-results"].includes(entry.name)) {
          await walk(new URL(`${entry.name}/`, dir), `${name}/`);
        }
      } else if (/\.(ts|sql)$/.test(entry.name) && !entry.name.endsWith("_test.ts")) {
        const text = await Deno.readTextFile(new URL(entry.name, dir));
        if (/printshop\.organization_id|ORGANIZATION_SETTING/.test(text)) found.push(name);
        for (
          const match of text.matchAll(
            /set_config\(\s*(?:\$\{ORGANIZATION_SETTING\}|'printshop\.organization_id')[^)]*\)/g,
          )
        ) {
          assert.match(match[0], /,\s*true\s*\)$/, `${name}: ${match[0]} is for the session`);
        }
        for (
          const match of text.matchAll(
            /\bset\s+(?:session\s+)?(?:\$\{ORGANIZATION_SETTING\}|printshop\.organization_id)/gi,
          )
        ) {
          assert.fail(
            `${name}: "${match[0]}" sets it for the session (SET LOCAL is for a transaction)`,
          );
        }
      }
    }
  };
  for (const top of ["shared", "services", "gateway", "scripts", "e2e"]) {
    await walk(new URL(`${top}/`, root), `${top}/`);
  }
  assert.deepEqual(found.filter((name) => !allowed.has(name)), []);
});
