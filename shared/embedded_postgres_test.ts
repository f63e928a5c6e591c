import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import {
  type EmbeddedPostgres,
  startEmbeddedPostgres,
  startThrowawayPostgres,
} from "./embedded_postgres.ts";
import { connect } from "./db/mod.ts";
import { sleep, waitFor } from "./net.ts";

/** The pid of the postmaster running on the cluster (first line of its postmaster.pid). */
async function postmasterPid(pg: EmbeddedPostgres): Promise<number> {
  return Number((await Deno.readTextFile(join(pg.dataDir, "postmaster.pid"))).split("\n")[0]);
}

async function accepting(url: string): Promise<boolean> {
  const sql = connect(url, { schema: "public", max: 1 });
  try {
    await sql`SELECT 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/**
 * Processes of a server on `dataDir`: the postmaster names it in its command line, its children
 * (whose command lines do not) run in it.
 */
async function processesOn(dataDir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const cmdline = await Deno.readTextFile(`/proc/${entry.name}/cmdline`);
      const cwd = await Deno.readLink(`/proc/${entry.name}/cwd`).catch(() => "");
      if (cmdline.includes(dataDir) || cwd === dataDir) {
        found.push(`${entry.name}: ${cmdline.replaceAll("\0", " ").trim()}`);
      }
    } catch { /* gone */ }
  }
  return found;
}

/**
 * SIGKILLs the postmaster while a backend is busy in a query: that backend outlives it (it
 * notices only at its next wait) and holds the server's shared memory.
 */
async function killWhileBusy(pg: EmbeddedPostgres): Promise<void> {
  const sql = connect(pg.url, { schema: "public", max: 1 });
  const busy = sql`SELECT count(*) FROM generate_series(1, 1000000000)`.catch(() => {});
  await waitFor("the busy query to start", async () => {
    const watch = connect(pg.url, { schema: "public", max: 1 });
    try {
      const rows = await watch`
        SELECT 1 FROM pg_stat_activity WHERE query LIKE '%generate_series(1, 1000000000)%'
          AND state = 'active' AND pid <> pg_backend_pid()`;
      return rows.length > 0;
    } finally {
      await watch.end({ timeout: 1 });
    }
  }, 5_000);
  Deno.kill(await postmasterPid(pg), "SIGKILL");
  // The test is done with this connection; the client must not wait for the busy backend.
  void sql.end({ timeout: 0 }).catch(() => {});
  void busy;
}

/** A folder the postgres user can pass through (as root), so the cluster stays inside it. */
async function tempDir(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "printshop-embedded-pg-" });
  await Deno.chmod(dir, 0o711);
  return dir;
}

Deno.test("startEmbeddedPostgres starts a killed server again on the same data and port, and stop() while it is down is quick", async () => {
  const dir = await tempDir();
  const said: string[] = [];
  const pg = await startEmbeddedPostgres({
    dataDir: join(dir, "pgdata"),
    password: crypto.randomUUID(),
    say: (line) => said.push(line),
  });
  try {
    const sql = connect(pg.url, { schema: "public", max: 1 });
    await sql`CREATE TABLE kept (note text)`;
    await sql`INSERT INTO kept VALUES ('survives a crash')`;
    await sql.end();
    const first = await postmasterPid(pg);

    await killWhileBusy(pg);
    const killedAt = Date.now();
    await waitFor("PostgreSQL on the same port to accept again", () => accepting(pg.url), 10_000);
    const downMs = Date.now() - killedAt;
    assert.ok(downMs >= 400, `the restart waits out the launcher's 0.5 s pause (${downMs} ms)`);
    await waitFor("the second line", () => Promise.resolve(said.length >= 2), 5_000);
    assert.deepEqual(said, [
      "postgres exited with code 137 (SIGKILL); restarting in 0.5 s (attempt 2)",
      "postgres is running again (attempt 2)",
    ]);
    assert.notEqual(await postmasterPid(pg), first, "a new postmaster");
    const again = connect(pg.url, { schema: "public", max: 1 });
    try {
      assert.deepEqual([...await again`SELECT note FROM kept`], [{ note: "survives a crash" }]);
    } finally {
      await again.end();
    }
    const log = await Deno.readTextFile(join(dir, "postgres.log"));
    assert.match(
      log,
      /postgres exited with code 137 \(SIGKILL\); restarting in 0.5 s \(attempt 2\)/,
    );
    assert.match(log, /automatic recovery in progress/);

    // Down again (what is left of it busy in a query), and a stop asked for at once: quick.
    await killWhileBusy(pg);
    const stopping = Date.now();
    await pg.stop();
    const stopMs = Date.now() - stopping;
    assert.ok(stopMs < 5_000, `stop() took ${stopMs} ms`);
    assert.deepEqual(await processesOn(pg.dataDir), []);
  } finally {
    await pg.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("startThrowawayPostgres comes back after its server is killed; stop() stays quick and removes its files", async () => {
  const said: string[] = [];
  const pg = await startThrowawayPostgres("printshop-throwaway-pg-", {
    say: (line) => said.push(line),
  });
  const folder = dirname(pg.dataDir);
  try {
    Deno.kill(await postmasterPid(pg), "SIGKILL");
    await waitFor("the cluster to accept again", () => accepting(pg.url), 10_000);
    await waitFor("the restart to be said", () => Promise.resolve(said.length >= 2), 5_000);
    assert.deepEqual(said, [
      "postgres exited with code 137 (SIGKILL); restarting in 0.5 s (attempt 2)",
      "postgres is running again (attempt 2)",
    ]);

    // Killed again, and a stop asked for during the restart's pause: quick, and it calls it off.
    await killWhileBusy(pg);
    await waitFor("the second restart", () => Promise.resolve(said.length >= 3), 5_000);
    assert.equal(said[2], "postgres exited with code 137 (SIGKILL); restarting in 1 s (attempt 3)");
    const stopping = Date.now();
    await pg.stop();
    const stopMs = Date.now() - stopping;
    assert.ok(stopMs < 5_000, `stop() took ${stopMs} ms`);
    assert.deepEqual(await processesOn(pg.dataDir), []);
    assert.equal(await Deno.lstat(folder).then(() => true, () => false), false, "files removed");
    await sleep(2_500); // past the pause the third run would have waited
    assert.deepEqual(await processesOn(pg.dataDir), [], "the restart was called off");
    assert.equal(said.length, 3, said.join("\n"));
  } finally {
    await pg.stop();
  }
});

Deno.test("a throwaway cluster let go as its process exits is stopped and its folder removed", async () => {
  // What a test file run on its own does (shared/testing/db.ts): its cluster goes with `unload`.
  const module = new URL("./embedded_postgres.ts", import.meta.url).href;
  const script = `
    import { startThrowawayPostgres } from ${JSON.stringify(module)};
    const pg = await startThrowawayPostgres("printshop-exiting-pg-");
    globalThis.addEventListener("unload", () => pg.stopOnExit());
    console.log(pg.dataDir);
    Deno.exit(0); // as \`deno test\` ends: the server's pipes would keep the process waiting
  `;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--node-modules-dir=manual", script],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).output();
  assert.ok(out.success, "the process exited cleanly");
  const dataDir = new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!;
  assert.match(dataDir, /printshop-exiting-pg-/);
  const folder = dirname(dataDir);
  try {
    await waitFor(
      "the exited process's cluster to stop and its folder to go",
      async () =>
        (await processesOn(dataDir)).length === 0 &&
        !(await Deno.lstat(folder).then(() => true, () => false)),
      30_000,
      100,
    );
  } finally {
    for (const found of await processesOn(dataDir)) {
      try {
        Deno.kill(Number(found.split(":")[0]), "SIGKILL");
      } catch { /* gone meanwhile */ }
    }
    await Deno.remove(folder, { recursive: true }).catch(() => {});
  }
});

Deno.test("a plan cached while a table was nearly empty is made again within seconds of its growth", async () => {
  const pg = await startThrowawayPostgres("printshop-naptime-pg-");
  const sql = connect(pg.url, { schema: "public", max: 1 });
  try {
    const conn = await sql.reserve();
    try {
      await conn`CREATE TABLE grown (id int PRIMARY KEY, note text)`;
      await conn`INSERT INTO grown SELECT g, 'row ' || g FROM generate_series(1, 10) g`;
      await conn`ANALYZE grown`;
      // Run past PostgreSQL's five custom plans, so the connection keeps one generic plan: for a
      // table of one page, a sequential scan.
      await conn`PREPARE by_id(int) AS SELECT note FROM grown WHERE id = $1`;
      for (let i = 1; i <= 6; i++) await conn.unsafe(`EXECUTE by_id(${i})`);
      const plan = async (): Promise<string> =>
        (await conn.unsafe<{ "QUERY PLAN": string }[]>("EXPLAIN EXECUTE by_id(1)"))
          .map((r) => r["QUERY PLAN"]).join("\n");
      assert.match(await plan(), /Seq Scan on grown/);
      await conn`INSERT INTO grown SELECT g, 'row ' || g FROM generate_series(11, 20000) g`;
      // No ANALYZE here: autovacuum's, at the cluster's naptime, is what remakes the plan (at
      // PostgreSQL's default of a minute this waits past its limit).
      await waitFor(
        "autovacuum to analyse the grown table",
        async () => {
          const [row] = await conn<{ analysed: boolean }[]>`
          SELECT last_autoanalyze IS NOT NULL AS analysed FROM pg_stat_user_tables
          WHERE relname = 'grown'`;
          return row?.analysed === true;
        },
        30_000,
        500,
      );
      assert.match(await plan(), /Index Scan using grown_pkey/);
    } finally {
      conn.release();
    }
  } finally {
    await sql.end({ timeout: 1 });
    await pg.stop();
  }
});
